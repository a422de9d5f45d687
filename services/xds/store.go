package xds

import (
	"sync"
	"sync/atomic"
)

// store holds the snapshots of every gateway and the streams of each.
// Setting a snapshot never waits: it swaps the gateway's snapshot pointers
// and wakes the gateway's streams with a non-blocking send on each
// stream's channel of capacity 1; a stream computes its next response from
// the latest snapshot when it gets to it, so a slow stream skips the
// versions it had no time for instead of queueing them. Its methods are
// safe for concurrent use.
type store struct {
	mu       sync.Mutex
	gateways map[string]*gatewayEntry // by node cluster
	streams  map[*stream]struct{}
}

// gatewayEntry is one gateway's snapshots and streams. Streams read the
// snapshots without the store's lock.
type gatewayEntry struct {
	name      string
	envoy     atomic.Pointer[snapshot]
	proxyless atomic.Pointer[snapshot]
	// fromBucket is set while the bucket holds the gateway, or held it
	// (a deleted gateway is served empty); only such gateways are named in
	// metrics. Guarded by the store's lock.
	fromBucket bool
	streams    map[*stream]struct{}
}

func newStore() *store {
	return &store{gateways: map[string]*gatewayEntry{}, streams: map[*stream]struct{}{}}
}

// entryLocked returns the gateway's entry, creating it.
func (s *store) entryLocked(gateway string) *gatewayEntry {
	e := s.gateways[gateway]
	if e == nil {
		e = &gatewayEntry{name: gateway, streams: map[*stream]struct{}{}}
		s.gateways[gateway] = e
	}
	return e
}

// set serves envoy and proxyless to the gateway's clients and wakes its
// streams; it returns how many it woke.
func (s *store) set(gateway string, envoy, proxyless *snapshot) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entryLocked(gateway)
	e.fromBucket = true
	e.envoy.Store(envoy)
	e.proxyless.Store(proxyless)
	for st := range e.streams {
		st.poke()
	}
	return len(e.streams)
}

// snapshot is the gateway's Envoy or proxyless snapshot; nil when it has
// none.
func (s *store) snapshot(gateway string, proxyless bool) *snapshot {
	s.mu.Lock()
	e := s.gateways[gateway]
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	if proxyless {
		return e.proxyless.Load()
	}
	return e.envoy.Load()
}

// known reports whether the gateway has a snapshot from the bucket: its
// name may label metrics.
func (s *store) known(gateway string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.gateways[gateway]
	return e != nil && e.fromBucket
}

// label is gateway when it is known, else "unknown": metric labels never
// hold a name a client chose that the bucket does not hold.
func (s *store) label(gateway string) string {
	if s.known(gateway) {
		return gateway
	}
	return "unknown"
}

// add registers a stream without a gateway yet (before its first
// request), so that Streams and shutdown see it.
func (s *store) add(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams[st] = struct{}{}
}

// join attaches a stream to its gateway and returns the gateway's entry.
func (s *store) join(st *stream, gateway string) *gatewayEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entryLocked(gateway)
	e.streams[st] = struct{}{}
	return e
}

// remove forgets a stream; a gateway with neither streams nor a snapshot
// from the bucket is forgotten too.
func (s *store) remove(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.streams, st)
	e := st.gatewayEntry()
	if e == nil {
		return
	}
	delete(e.streams, st)
	if len(e.streams) == 0 && !e.fromBucket {
		delete(s.gateways, e.name)
	}
}

// all returns the open streams.
func (s *store) all() []*stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*stream, 0, len(s.streams))
	for st := range s.streams {
		out = append(out, st)
	}
	return out
}

// counts is the number of streams of each gateway, under the gateway's
// metric label.
func (s *store) counts() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for name, e := range s.gateways {
		if len(e.streams) == 0 {
			continue
		}
		if !e.fromBucket {
			name = "unknown"
		}
		out[name] += int64(len(e.streams))
	}
	return out
}
