package translator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
)

// outputBuckets are the buckets the translator writes.
var outputBuckets = []bus.Bucket{bus.IR, bus.XDS, bus.Infra, bus.Status}

// Headers of the translator's outputs (see the bus contract).
const (
	headerDigest = bus.HeaderDigest
	headerWriter = bus.HeaderWriter
)

// fingerprint identifies a value without its source revision. The zero
// fingerprint stands for a value of unknown content.
type fingerprint [sha256.Size]byte

func (f fingerprint) String() string { return hex.EncodeToString(f[:]) }

// digestOf reads the fingerprint in an entry's headers; zero when absent.
func digestOf(e *bus.Entry) fingerprint {
	var f fingerprint
	if b, err := hex.DecodeString(e.Header.Get(headerDigest)); err == nil && len(b) == len(f) {
		copy(f[:], b)
	}
	return f
}

// slot is what the ledger knows of one key.
type slot struct {
	present bool
	fp      fingerprint
	// rev is the KV revision of the newest message known for the key; older
	// ones that arrive late are ignored.
	rev uint64
	// source is the source revision of that message; unknownSource when
	// the key may have moved on since.
	source uint64
	// large is set when the value may be in the object store.
	large bool
}

// unknownSource marks a slot whose newest message is not known.
const unknownSource = math.MaxUint64

// ledger mirrors what the output buckets hold, whoever wrote it: a slot per
// key, fed by headers-only watches of the buckets and by this replica's own
// writes. It lets the service skip writes that would change nothing, find
// the keys to delete, and notice when a key it owns changes under it.
type ledger struct {
	values map[bus.Bucket]map[string]slot
	// statusKeys are the present status keys of each gateway; class keys
	// are under the gateway -/-.
	statusKeys map[types.NamespacedName]map[string]struct{}
	// xdsKeys are the present resource keys of each gateway in the xds
	// bucket (its commit aside).
	xdsKeys map[types.NamespacedName]map[string]struct{}
}

func newLedger() *ledger {
	l := &ledger{values: map[bus.Bucket]map[string]slot{},
		statusKeys: map[types.NamespacedName]map[string]struct{}{}, xdsKeys: map[types.NamespacedName]map[string]struct{}{}}
	for _, b := range outputBuckets {
		l.values[b] = map[string]slot{}
	}
	return l
}

// watchOutputs watches the output buckets, headers only, and merges their
// entries into one channel, closed when ctx is done. Each bucket's initial
// sync ends with a nil entry, so the first len(outputBuckets) nil entries
// mark the end of the initial sync of them all.
func (s *Service) watchOutputs(ctx context.Context) (<-chan *bus.Entry, error) {
	out := make(chan *bus.Entry, 64)
	var watchers []*bus.Watcher
	for _, b := range outputBuckets {
		w, err := s.bus.Watch(ctx, b, ">", bus.HeadersOnly())
		if err != nil {
			for _, w := range watchers {
				w.Stop()
			}
			return nil, err
		}
		watchers = append(watchers, w)
	}
	for _, w := range watchers {
		go func() {
			defer w.Stop()
			for e := range w.Updates() {
				select {
				case out <- e:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return out, nil
}

// loadLedger reads the output buckets' initial content from outputs.
func loadLedger(ctx context.Context, outputs <-chan *bus.Entry) (*ledger, error) {
	l := newLedger()
	for synced := 0; synced < len(outputBuckets); {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e := <-outputs:
			if e == nil {
				synced++
				continue
			}
			l.observe(e)
		}
	}
	return l, nil
}

// observe records an entry of an output bucket and reports whether it
// changed what the ledger knew of the key: presence or content.
func (l *ledger) observe(e *bus.Entry) bool {
	if isDataPlane(e.Bucket, e.Key) {
		return false
	}
	old := l.values[e.Bucket][e.Key]
	if e.Revision <= old.rev {
		return false
	}
	next := slot{present: e.Op == bus.OpPut, rev: e.Revision, source: e.SourceRevision, large: e.Header.Get(bus.HeaderObject) != ""}
	if next.present {
		next.fp = digestOf(e)
	}
	l.store(e.Bucket, e.Key, next)
	return old.present != next.present || (next.present && (old.fp != next.fp || next.fp == fingerprint{}))
}

// wrote records this replica's write, from source revision source, of a
// value of fp at KV revision rev.
func (l *ledger) wrote(b bus.Bucket, key string, fp fingerprint, rev, source uint64, large bool) {
	l.store(b, key, slot{present: true, fp: fp, rev: max(rev, l.values[b][key].rev), source: source, large: large})
}

// unknown records that key holds a value this replica has not seen.
func (l *ledger) unknown(b bus.Bucket, key string) {
	l.store(b, key, slot{present: true, rev: l.values[b][key].rev, source: unknownSource})
}

// deleted records this replica's deletion of key.
func (l *ledger) deleted(b bus.Bucket, key string) {
	l.store(b, key, slot{rev: l.values[b][key].rev, source: unknownSource})
}

// expected returns the KV revision a write from source revision source
// can expect key to be at: the newest message the ledger knows, when it
// comes from no newer resources and its value is not in the object store
// (which the bus cleans up only when it reads the old value itself).
// A write at that revision (bus.WithRevision) needs no read first; when the
// key has moved on it fails, and the write falls back to the bus's own
// compare-and-set.
func (l *ledger) expected(b bus.Bucket, key string, source uint64) (uint64, bool) {
	s := l.values[b][key]
	return s.rev, !s.large && s.source <= source
}

func (l *ledger) store(b bus.Bucket, key string, s slot) {
	l.values[b][key] = s
	switch b {
	case bus.Status:
		if gw, ok := statusGateway(key); ok {
			index(l.statusKeys, gw, key, s.present)
		}
	case bus.XDS:
		if gw, ok := xdsResourceGateway(key); ok {
			index(l.xdsKeys, gw, key, s.present)
		}
	}
}

// index adds key to or removes it from the keys of gw.
func index(keys map[types.NamespacedName]map[string]struct{}, gw types.NamespacedName, key string, present bool) {
	set := keys[gw]
	switch {
	case present && set == nil:
		keys[gw] = map[string]struct{}{key: {}}
	case present:
		set[key] = struct{}{}
	default:
		delete(set, key)
		if len(set) == 0 {
			delete(keys, gw)
		}
	}
}

// xdsResourceGateway returns the gateway of a resource key of the xds
// bucket; false for a commit or a key of another layout.
func xdsResourceGateway(key string) (types.NamespacedName, bool) {
	gwKey, suffix, err := xdsbucket.ParseKey(key)
	if err != nil || suffix == "" {
		return types.NamespacedName{}, false
	}
	ns, name, err := bus.ParseGatewayKey(gwKey)
	return types.NamespacedName{Namespace: ns, Name: name}, err == nil
}

// unchanged reports whether key of b is known to hold a value of fp.
func (l *ledger) unchanged(b bus.Bucket, key string, fp fingerprint) bool {
	s := l.values[b][key]
	return s.present && s.fp == fp && fp != fingerprint{}
}

func (l *ledger) has(b bus.Bucket, key string) bool { return l.values[b][key].present }

// gateways returns the gateways the output buckets hold something for.
func (l *ledger) gateways() []types.NamespacedName {
	set := map[types.NamespacedName]struct{}{}
	for _, b := range []bus.Bucket{bus.IR, bus.XDS, bus.Infra} {
		for key, s := range l.values[b] {
			if !s.present {
				continue
			}
			if ns, name, err := bus.ParseGatewayKey(key); err == nil {
				set[types.NamespacedName{Namespace: ns, Name: name}] = struct{}{}
			}
		}
	}
	for gw := range l.statusKeys {
		if gw != classGatewayName {
			set[gw] = struct{}{}
		}
	}
	for gw := range l.xdsKeys {
		set[gw] = struct{}{}
	}
	out := make([]types.NamespacedName, 0, len(set))
	for gw := range set {
		out = append(out, gw)
	}
	return out
}

// classes returns the GatewayClasses the status bucket holds a status for.
func (l *ledger) classes() []string {
	var out []string
	for key := range l.statusKeys[classGatewayName] {
		if _, _, name, _, _, err := bus.ParseStatusKey(key); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// classGatewayName is the gateway part of the status keys of classes.
var classGatewayName = types.NamespacedName{Namespace: classGateway, Name: classGateway}

// statusGateway returns the gateway a status key was written for.
func statusGateway(key string) (types.NamespacedName, bool) {
	_, _, _, gwNS, gwName, err := bus.ParseStatusKey(key)
	if err != nil || othersStatus(gwNS) {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: gwNS, Name: gwName}, true
}

// isDataPlane reports whether key is a status another service writes: the
// xds service (bus.DataPlaneStatusKey) or the infra service (a Gateway's
// addresses, under the gateway token bus.Infrastructure). Neither is the
// translator's to track or delete.
func isDataPlane(b bus.Bucket, key string) bool {
	if b != bus.Status {
		return false
	}
	_, _, _, gwNS, _, err := bus.ParseStatusKey(key)
	return err == nil && othersStatus(gwNS)
}

// othersStatus reports whether the gateway-namespace token of a status key
// is that of another service's entries.
func othersStatus(gwNS string) bool {
	return gwNS == bus.DataPlane || gwNS == bus.Infrastructure
}

// fingerprintOf hashes the deterministic encoding of m without its source
// revision, which changes with every write. It sets the revision aside for
// the time of the encoding, so m must not be read concurrently.
func fingerprintOf(m proto.Message) fingerprint {
	fp, _ := fingerprintAndBytes(m)
	return fp
}

// fingerprintAndBytes is fingerprintOf with the bytes it hashed, which are
// m's encoding unless m carries a source revision (nil then, and on error).
func fingerprintAndBytes(m proto.Message) (fingerprint, []byte) {
	rev, stamped := sourceOf(m)
	stamp(m, 0)
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	stamp(m, rev)
	if err != nil {
		return fingerprint{}, nil // unknown content: the write happens
	}
	if stamped {
		return sha256.Sum256(b), nil
	}
	return sha256.Sum256(b), b
}

// sourceOf is the source revision of the messages that carry one, and
// whether m is one.
func sourceOf(m proto.Message) (uint64, bool) {
	switch v := m.(type) {
	case *busv1.XdsSnapshot:
		return v.GetSourceRevision(), true
	case *busv1.Proxy:
		return v.GetSourceRevision(), true
	}
	return 0, false
}

// stamp sets the source revision of the messages that carry one.
func stamp(m proto.Message, rev uint64) {
	switch v := m.(type) {
	case *busv1.XdsSnapshot:
		v.SourceRevision = rev
	case *busv1.Proxy:
		v.SourceRevision = rev
	}
}

// errOutputsClosed ends a session whose watch of the output buckets stopped.
var errOutputsClosed = fmt.Errorf("translator: the watch of the output buckets ended")
