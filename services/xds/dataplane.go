package xds

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// maxDetail bounds the client's error detail quoted in a status message;
// gRPC's details print whole resources.
const maxDetail = 4096

// statusWriteTimeout bounds one write of a status entry.
const statusWriteTimeout = 10 * time.Second

// dataPlane keeps what the Envoys of each gateway said about the version
// the cache serves them, and mirrors it to the status bucket: while a
// client connected to this replica rejects the gateway's current version,
// this replica's entry Gateway.<ns>.<name>.=xds.<replica>
// ([bus.DataPlaneStatusKey]) holds the condition Programmed: False, reason
// Invalid, naming the version, the type URL and the client's error detail.
// The entry is deleted when a client ACKs a later version of that type,
// when the gateway is deleted, and when every stream that rejected the
// version has closed (its client may have moved to another replica, which
// then reports what it hears). Entries this replica id left behind in an
// earlier run are deleted at start, and its entries are deleted when it
// stops.
//
// The streams and the feed report to it from many goroutines; one
// goroutine ([dataPlane.run]) writes the bucket, so a slow NATS never
// blocks an xDS stream. Writes are level-based: each writes the gateway's
// current state, and a failed write is retried with backoff.
type dataPlane struct {
	bus     *bus.Bus
	log     *slog.Logger
	replica string
	// served is the version of typeURL the cache serves to gateway; "" when
	// it has no snapshot.
	served func(gateway, typeURL string) string

	mu       sync.Mutex
	rejected map[string]*rejection // by gateway (node cluster)
	dirty    map[string]bool       // gateways whose entry is not written yet
	written  map[string]bool       // gateways whose entry may be in the bucket
	kick     chan struct{}         // capacity 1: dirty has gateways
}

// rejection is a gateway's current version, rejected by clients.
type rejection struct {
	first   nack            // the first NACK, which the status quotes
	streams map[uint64]bool // the open streams that rejected the version
	// logged holds "<node>\x00<type URL>" for each client and type whose
	// NACK of this version was logged.
	logged map[string]bool
}

func newDataPlane(b *bus.Bus, log *slog.Logger, replica string, served func(gateway, typeURL string) string) *dataPlane {
	return &dataPlane{
		bus: b, log: log, replica: replica, served: served,
		rejected: map[string]*rejection{}, dirty: map[string]bool{}, written: map[string]bool{},
		kick: make(chan struct{}, 1),
	}
}

// nacked records a NACK and logs it, once per version, client and type.
// Only a NACK of the version the cache serves sets the status: a NACK of an
// older one is answered with the current version, whose answer will tell.
func (d *dataPlane) nacked(n nack) {
	d.mu.Lock()
	first := true
	if n.version == d.served(n.gateway, n.typeURL) {
		r := d.rejected[n.gateway]
		if r == nil || r.first.version != n.version {
			r = &rejection{first: n, streams: map[uint64]bool{}, logged: map[string]bool{}}
			d.rejected[n.gateway] = r
			d.markLocked(n.gateway)
		}
		r.streams[n.stream] = true
		key := n.nodeID + "\x00" + n.typeURL
		first = !r.logged[key]
		r.logged[key] = true
	}
	d.mu.Unlock()
	if first {
		d.log.Warn("xds nack", "gateway", n.gateway, "version", n.version, "type_url", n.typeURL,
			"node", truncate(n.nodeID, 200), "error_detail", truncate(n.detail.GetMessage(), maxDetail))
	}
}

// acked clears the gateway's rejection when a client ACKs, for the
// rejected type, the version the cache now serves, and it is not the
// rejected one.
func (d *dataPlane) acked(gateway, version, typeURL string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.rejected[gateway]
	if r == nil || r.first.typeURL != typeURL || r.first.version == version || version != d.served(gateway, typeURL) {
		return
	}
	d.clearLocked(gateway)
	d.log.Info("xds rejection cleared: a later version is acknowledged", "gateway", gateway,
		"rejected_version", r.first.version, "version", version, "type_url", typeURL)
}

// closed forgets a stream; a rejection none of whose streams is open is
// cleared.
func (d *dataPlane) closed(s uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for gateway, r := range d.rejected {
		if !r.streams[s] {
			continue
		}
		delete(r.streams, s)
		if len(r.streams) == 0 {
			d.clearLocked(gateway)
			d.log.Info("xds rejection cleared: its clients disconnected", "gateway", gateway,
				"rejected_version", r.first.version, "type_url", r.first.typeURL)
		}
	}
}

// removed forgets a deleted gateway.
func (d *dataPlane) removed(gateway string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearLocked(gateway)
}

// clearLocked forgets the gateway's rejection, and has its entry deleted
// if one may have been written. (An entry still to be written is not
// written: the writer finds no rejection.)
func (d *dataPlane) clearLocked(gateway string) {
	delete(d.rejected, gateway)
	if d.written[gateway] {
		d.markLocked(gateway)
	}
}

func (d *dataPlane) markLocked(gateway string) {
	d.dirty[gateway] = true
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// plan is the entry the gateway should have (nil when it should have none)
// and whether one may be in the bucket. A gateway given an entry counts as
// written from now on, so that a rejection cleared while the entry is being
// put has the entry deleted next.
func (d *dataPlane) plan(gateway string) (st *busv1.Status, written bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	written = d.written[gateway]
	st = d.statusLocked(gateway)
	if st != nil {
		d.written[gateway] = true
	}
	return st, written
}

// statusLocked is the entry the gateway should have; nil when it should
// have none.
func (d *dataPlane) statusLocked(gateway string) *busv1.Status {
	r := d.rejected[gateway]
	if r == nil {
		return nil
	}
	ns, name, _ := strings.Cut(gateway, "/")
	ref := &busv1.ObjectRef{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: ns, Name: name}
	return &busv1.Status{
		Object:  ref,
		Gateway: ref,
		Conditions: []*busv1.Condition{{
			Type:   "Programmed",
			Status: "False",
			Reason: "Invalid",
			Message: fmt.Sprintf("xDS client %q rejected version %s of %s: %s",
				r.first.nodeID, r.first.version, r.first.typeURL, truncate(r.first.detail.GetMessage(), maxDetail)),
		}},
	}
}

// truncate cuts s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
