package xds

import (
	"slices"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// Delta, per stream and type: the stream keeps the version of each
// resource the client holds (what it declared in
// initial_resource_versions, then what it was sent) as a pointer to the
// type's version it was last sent, and sends only resources whose version
// differs, and the names of those removed. What was sent counts as held
// even when the client NACKs it, so a rejected response is never sent
// again; the next version of the resource is. The first request of a
// wildcard subscription is always answered, empty when the client holds
// everything already. As for the state of the world, one response per
// type is outstanding at a time.

// handleDelta applies one request to the stream's state.
func (s *Service) handleDelta(st *stream, req *discovery.DeltaDiscoveryRequest) error {
	i, err := s.requestType(st, req.GetTypeUrl())
	if err != nil || i < 0 {
		return err
	}
	if err := s.first(st, req.GetNode()); err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	ts := &st.types[i]
	if !ts.subscribed {
		ts.subscribed, ts.initial = true, true
		ts.sub.wildcard = len(req.GetResourceNamesSubscribe()) == 0
		if len(req.GetInitialResourceVersions()) > 0 {
			ts.diff = make(map[string]string, len(req.GetInitialResourceVersions()))
			for name, v := range req.GetInitialResourceVersions() {
				ts.diff[name] = v
			}
		}
	}
	if nonce := req.GetResponseNonce(); nonce != "" {
		if nonce == ts.pending {
			ts.pending = ""
			s.answered(st, i, ts, ts.sentVersion, "", req.GetErrorDetail())
		} else {
			s.metrics.transient(transientStaleNonce)
		}
	}
	for _, name := range req.GetResourceNamesSubscribe() {
		if ts.sub.add(name) && name != "*" {
			if _, declared := req.GetInitialResourceVersions()[name]; !declared {
				ts.setHeld(name, "")
			}
		}
	}
	for _, name := range req.GetResourceNamesUnsubscribe() {
		if ts.sub.drop(name) && name != "*" {
			ts.setHeld(name, "")
		}
	}
	if snap := st.view(); snap != nil {
		ts.sub.compact(snap.types[i])
	}
	return nil
}

// setHeld records the version of name the client holds.
func (ts *typeState) setHeld(name, version string) {
	if ts.diff == nil {
		ts.diff = map[string]string{}
	}
	ts.diff[name] = version
}

// heldVersion is the version of name the client holds; "" for none.
func (ts *typeState) heldVersion(name string) string {
	if v, ok := ts.diff[name]; ok {
		return v
	}
	if ts.has != nil {
		if i, ok := ts.has.names.index[name]; ok {
			return ts.has.res[i].version
		}
	}
	return ""
}

// pushDelta sends every type whose response is due, in the order of
// [pushOrder].
func (s *Service) pushDelta(st *stream) error {
	snap := st.view()
	if snap == nil {
		return nil
	}
	order, holdClusters := pushOrder(st, snap)
	for _, i := range order {
		if st.only >= 0 && i != st.only || held(i, holdClusters) {
			continue
		}
		msg, t := s.nextDelta(st, i, snap.types[i])
		if msg == nil {
			continue
		}
		if err := s.send(st, i, msg, t); err != nil {
			return err
		}
	}
	return nil
}

// nextDelta is the delta response of type i the stream is due; nil when
// none is. It records what the client then holds.
func (s *Service) nextDelta(st *stream, i int, t *typeSnap) (*encoded, *typeSnap) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ts := &st.types[i]
	if !ts.subscribed || ts.pending != "" {
		return nil, nil
	}
	picked, removed := deltaChanges(ts, t)
	if len(picked) == 0 && len(removed) == 0 && !(ts.initial && ts.sub.wildcard) {
		ts.initial = false
		return nil, nil
	}
	nonce := st.nextNonce()
	ts.pending, ts.last, ts.sentAt, ts.sentVersion, ts.initial = nonce, nonce, now(), t.version, false
	ts.has, ts.diff, ts.sentNames = t, nil, t.names
	return deltaResponse(t, picked, removed, nonce), t
}

// deltaChanges lists the resources of t the client subscribes to and
// does not hold at their version, and the names it holds that t does not
// have.
func deltaChanges(ts *typeState, t *typeSnap) (picked []int32, removed []string) {
	if ts.has == t && len(ts.diff) == 0 {
		return nil, nil
	}
	if ts.has != nil && ts.has.seq == t.prevSeq && len(ts.diff) == 0 {
		for _, i := range t.changed {
			if ts.sub.contains(t.names.names[i]) {
				picked = append(picked, i)
			}
		}
		for _, name := range t.removed {
			if ts.sub.contains(name) {
				removed = append(removed, name)
			}
		}
		return picked, removed
	}
	for i, name := range t.names.names {
		if ts.sub.contains(name) && ts.heldVersion(name) != t.res[i].version {
			picked = append(picked, int32(i))
		}
	}
	if ts.has != nil {
		for _, name := range ts.has.names.names {
			if _, over := ts.diff[name]; !over && !t.names.has(name) && ts.sub.contains(name) {
				removed = append(removed, name)
			}
		}
	}
	for name, v := range ts.diff {
		if v != "" && !t.names.has(name) && ts.sub.contains(name) {
			removed = append(removed, name)
		}
	}
	slices.Sort(removed)
	return picked, removed
}

func sortIndexes(s []int32) { slices.Sort(s) }
