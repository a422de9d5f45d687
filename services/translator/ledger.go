package translator

import (
	"context"
	"crypto/sha256"
	"fmt"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
)

// outputBuckets are the buckets the translator writes.
var outputBuckets = []bus.Bucket{bus.IR, bus.XDS, bus.Infra, bus.Status}

// fingerprint identifies a value without its source revision.
type fingerprint [sha256.Size]byte

// ledger is what the output buckets hold, as far as this session knows: a
// fingerprint per key, and the status keys of each gateway. It lets the
// service skip writes that would change nothing and find the keys to delete.
type ledger struct {
	values map[bus.Bucket]map[string]fingerprint
	// statusKeys are the status keys written for each gateway; class keys
	// are under the gateway -/-.
	statusKeys map[types.NamespacedName]map[string]struct{}
	// maxSource is the newest source revision of the outputs read at the
	// start of the session.
	maxSource uint64
}

func newLedger() *ledger {
	l := &ledger{values: map[bus.Bucket]map[string]fingerprint{}, statusKeys: map[types.NamespacedName]map[string]struct{}{}}
	for _, b := range outputBuckets {
		l.values[b] = map[string]fingerprint{}
	}
	return l
}

// loadLedger reads the current content of the output buckets.
func (s *Service) loadLedger(ctx context.Context) (*ledger, error) {
	l := newLedger()
	for _, b := range outputBuckets {
		if err := s.loadBucket(ctx, l, b); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (s *Service) loadBucket(ctx context.Context, l *ledger, b bus.Bucket) error {
	w, err := s.bus.Watch(ctx, b, ">")
	if err != nil {
		return err
	}
	defer w.Stop()
	for e := range w.Updates() {
		if e == nil {
			return nil
		}
		var fp fingerprint // a value that does not decode matches no output
		if e.Err == nil {
			fp = fingerprintOf(e.Value)
		}
		l.set(b, e.Key, fp)
		l.maxSource = max(l.maxSource, e.SourceRevision)
	}
	return fmt.Errorf("translator: reading %s: %w", b, errWatchClosed)
}

// fingerprintOf hashes the deterministic encoding of m without its source
// revision, which changes with every write.
func fingerprintOf(m proto.Message) fingerprint {
	switch v := m.(type) {
	case *busv1.XdsSnapshot:
		if v.GetSourceRevision() != 0 {
			c := proto.CloneOf(v)
			c.SourceRevision = 0
			m = c
		}
	case *busv1.Proxy:
		if v.GetSourceRevision() != 0 {
			c := proto.CloneOf(v)
			c.SourceRevision = 0
			m = c
		}
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fingerprint{} // never equal to a real value: the write happens
	}
	return sha256.Sum256(b)
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

func (l *ledger) set(b bus.Bucket, key string, fp fingerprint) {
	l.values[b][key] = fp
	if b != bus.Status {
		return
	}
	if gw, ok := statusGateway(key); ok {
		keys := l.statusKeys[gw]
		if keys == nil {
			keys = map[string]struct{}{}
			l.statusKeys[gw] = keys
		}
		keys[key] = struct{}{}
	}
}

func (l *ledger) forget(b bus.Bucket, key string) {
	delete(l.values[b], key)
	if b != bus.Status {
		return
	}
	if gw, ok := statusGateway(key); ok {
		delete(l.statusKeys[gw], key)
		if len(l.statusKeys[gw]) == 0 {
			delete(l.statusKeys, gw)
		}
	}
}

// unchanged reports whether key of b is known to hold a value of fp.
func (l *ledger) unchanged(b bus.Bucket, key string, fp fingerprint) bool {
	old, ok := l.values[b][key]
	return ok && old == fp
}

func (l *ledger) has(b bus.Bucket, key string) bool {
	_, ok := l.values[b][key]
	return ok
}

// gateways returns the gateways the output buckets hold something for.
func (l *ledger) gateways() []types.NamespacedName {
	set := map[types.NamespacedName]struct{}{}
	for _, b := range []bus.Bucket{bus.IR, bus.XDS, bus.Infra} {
		for key := range l.values[b] {
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
	if err != nil {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: gwNS, Name: gwName}, true
}
