// Package status follows the status bucket and turns its entries into the
// status of Kubernetes objects.
//
// # Entries
//
// The status bucket holds one entry per object and parent Gateway, under
// bus.StatusKey: <Kind>.<ns or _>.<name>.<gateway ns>.<gateway>. The
// translator writes them (a GatewayClass's entry names the gateway "-.-");
// the xds service writes data-plane entries for Gateways under
// bus.DataPlaneStatusKey (<Kind>.<ns>.<name>.=xds.<replica>). A [Store]
// keeps them by object; [Gateway], [GatewayClass], [RouteParents] and
// [PolicyAncestors] merge the entries of one object with its live status.
// They follow the Gateway API's rules for status owned by several parties:
//
//   - a condition's lastTransitionTime changes only when its status does;
//   - conditions of other types than those set are kept, in place;
//   - a route's status.parents entries of other controllers are kept; the
//     entries of this controller are exactly those the status entries hold,
//     so an entry whose key was deleted disappears; the same holds for a
//     policy's status.ancestors;
//   - while a data-plane entry holds Programmed False for a Gateway, that
//     condition replaces the translator's Programmed.
//
// The merge functions are pure: the same inputs give the same status, so a
// writer compares the result with the live object and writes only when they
// differ.
package status

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Object names an object that carries status.
type Object struct {
	Kind      string
	Namespace string // empty for cluster-scoped kinds
	Name      string
}

// String returns "<Kind> <namespace>/<name>", or "<Kind> <name>".
func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Entry is one status entry of an object.
type Entry struct {
	Key string
	// DataPlane is true for the xds service's entries.
	DataPlane bool
	// Infra is true for the infra service's entries, which carry only the
	// addresses of the Gateway's proxies.
	Infra  bool
	Status *busv1.Status
	// Trace is the trace context the entry was written with, for a writer
	// to link its span to.
	Trace trace.SpanContext
}

// Change is one change of the status bucket: Status is nil when the entry
// was deleted.
type Change struct {
	Object Object
	Key    string
	Status *busv1.Status
}

// Store keeps the entries of the status bucket by object. It is safe for
// concurrent use; Follow fills it.
type Store struct {
	log *slog.Logger

	mu      sync.Mutex
	objects map[Object]map[string]Entry
	subs    map[int]func(Change)
	nextSub int
	synced  chan struct{} // closed once the bucket has been read in full
}

// NewStore returns an empty Store. A nil log discards.
func NewStore(log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{
		log: log, objects: map[Object]map[string]Entry{}, subs: map[int]func(Change){},
		synced: make(chan struct{}),
	}
}

// Entries returns the entries of o sorted by key. The caller must not modify
// the Status values.
func (s *Store) Entries(o Object) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, 0, len(s.objects[o]))
	for _, e := range s.objects[o] {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Objects returns the objects of kind that have entries.
func (s *Store) Objects(kind string) []Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Object
	for o := range s.objects {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// Subscribe calls fn with every change from now on, from the goroutine that
// runs Follow; fn must not block. cancel stops the calls.
func (s *Store) Subscribe(fn func(Change)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.subs[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subs, id)
	}
}

// WaitSynced blocks until the bucket has been read in full once, or ctx is
// done.
func (s *Store) WaitSynced(ctx context.Context) error {
	select {
	case <-s.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("status bucket not read: %w", context.Cause(ctx))
	}
}

// Synced reports whether the bucket has been read in full once.
func (s *Store) Synced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// put sets or (st nil) deletes the entry key and notifies the subscribers
// when it changed.
func (s *Store) put(key string, st *busv1.Status, sc trace.SpanContext) {
	kind, ns, name, gwNS, _, err := bus.ParseStatusKey(key)
	if err != nil {
		s.log.Warn("status entry ignored", "key", key, "error", err)
		return
	}
	o := Object{Kind: kind, Namespace: ns, Name: name}
	s.mu.Lock()
	entries := s.objects[o]
	prev, had := entries[key]
	switch {
	case st == nil && !had, st != nil && had && proto.Equal(prev.Status, st):
		s.mu.Unlock()
		return
	case st == nil:
		delete(entries, key)
		if len(entries) == 0 {
			delete(s.objects, o)
		}
	default:
		if entries == nil {
			entries = map[string]Entry{}
			s.objects[o] = entries
		}
		entries[key] = Entry{Key: key, DataPlane: gwNS == bus.DataPlane, Infra: gwNS == bus.Infrastructure, Status: st, Trace: sc}
	}
	subs := make([]func(Change), 0, len(s.subs))
	for _, id := range slices.Sorted(maps.Keys(s.subs)) {
		subs = append(subs, s.subs[id])
	}
	s.mu.Unlock()
	for _, fn := range subs {
		fn(Change{Object: o, Key: key, Status: st})
	}
}

// keys returns every key the store holds.
func (s *Store) keys() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, entries := range s.objects {
		for k := range entries {
			out[k] = true
		}
	}
	return out
}

// Follow reads the status bucket into the store and follows its changes
// until ctx is done; it then returns nil. When the watch fails it watches
// again (after a delay that grows to maxRetry), and entries deleted in the
// meantime are removed once the bucket has been read again.
func (s *Store) Follow(ctx context.Context, b *bus.Bus) error {
	retry := minRetry
	for ctx.Err() == nil {
		if s.follow(ctx, b) {
			retry = minRetry
		}
		select {
		case <-ctx.Done():
		case <-time.After(retry):
			retry = min(2*retry, maxRetry)
		}
	}
	return nil
}

const (
	minRetry = 250 * time.Millisecond
	maxRetry = 5 * time.Second
)

// follow runs one watch; it reports whether the initial read completed.
func (s *Store) follow(ctx context.Context, b *bus.Bus) bool {
	w, err := b.Watch(ctx, bus.Status, ">")
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("watch status bucket", "error", err)
		}
		return false
	}
	defer w.Stop()
	seen, initial := map[string]bool{}, true
	for e := range w.Updates() {
		if e == nil {
			s.resynced(seen)
			initial = false
			continue
		}
		if initial {
			seen[e.Key] = true
		}
		st, ok := e.Value.(*busv1.Status)
		switch {
		case e.Op == bus.OpDelete:
			s.put(e.Key, nil, trace.SpanContext{})
		case !ok:
			s.log.Warn("status entry ignored", "key", e.Key, "error", fmt.Sprintf("value is %T, not a gatewire.bus.v1.Status", e.Value))
		default:
			s.put(e.Key, st, trace.SpanContextFromContext(e.Context(context.Background())))
		}
	}
	if ctx.Err() == nil {
		s.log.Warn("status bucket watch ended; watching again")
	}
	return !initial
}

// resynced removes the entries the initial read of a watch did not see, and
// marks the store synced.
func (s *Store) resynced(seen map[string]bool) {
	for key := range s.keys() {
		if !seen[key] {
			s.put(key, nil, trace.SpanContext{})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.synced:
	default:
		close(s.synced)
	}
}
