package xds

import (
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// State of the world, per stream and type:
//
//   - A request without a response nonce subscribes (or subscribes
//     again) and says what the client has: its version_info. So does a
//     request with a nonce of a stream the type was never sent on: a
//     client that moved from another replica (or whose stream broke)
//     names the last nonce it saw there. A client
//     that names the version served now is sent nothing until it
//     changes, on this replica or another.
//   - The first request with the nonce of the last response answers it:
//     an ACK, or a NACK with error_detail. A NACK holds the rejected
//     version: it is not sent again, and the next version is. Later
//     requests with that nonce only change the names subscribed to (an
//     Envoy names the endpoints of new clusters so). A request with an
//     older nonce is stale and ignored: the client has not seen the last
//     response yet.
//   - One response per type is outstanding at a time: a new version is
//     sent once the client answered the last one, and a client slow to
//     answer skips the versions it had no time for.
//   - An Envoy (not a proxyless client) that names routes or endpoints is
//     sent them once it names every resource of the type the snapshot
//     holds, as it does after it applied the listeners or clusters that
//     need them; it is then sent the shared response of the type. Every
//     other named subscription is sent the resources it names that exist,
//     and sent again, at the same version, when its names change while
//     the last response held only part of the type (or the client said it
//     had the version while naming only part of it): names that grow to
//     cover the type do not mean the client has every resource.

// handleSotw applies one request to the stream's state.
func (s *Service) handleSotw(st *stream, req *discovery.DiscoveryRequest) error {
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
	snap := st.view()
	var current *typeSnap
	if snap != nil {
		current = snap.types[i]
	}
	subscribes := req.GetResponseNonce() == "" || ts.last == ""
	if nonce := req.GetResponseNonce(); !subscribes {
		if nonce != ts.last {
			s.metrics.transient(transientStaleNonce)
			return nil
		}
		if ts.pending != "" {
			ts.pending = ""
			s.answered(st, i, ts, ts.sentVersion, req.GetVersionInfo(), req.GetErrorDetail())
		}
	} else {
		ts.subscribed = true
		ts.pending = ""
		ts.sentVersion = req.GetVersionInfo()
		ts.acked = req.GetVersionInfo()
		ts.sentNames = nil
	}
	if ts.sub.set(req.GetResourceNames(), current) && req.GetResponseNonce() != "" {
		ts.namesChanged = true
	}
	if subscribes {
		// The client has at most the names it subscribes to.
		ts.sentPartial = current == nil || !ts.sub.covers(current)
	}
	return nil
}

// pushSotw sends every type whose response is due, in the order of
// [pushOrder].
func (s *Service) pushSotw(st *stream) error {
	snap := st.view()
	if snap == nil {
		return nil
	}
	order, holdClusters := pushOrder(st, snap)
	for _, i := range order {
		if st.only >= 0 && i != st.only || held(i, holdClusters) {
			continue
		}
		msg, t := s.nextSotw(st, i, snap.types[i])
		if msg == nil {
			continue
		}
		if err := s.send(st, i, msg, t); err != nil {
			return err
		}
	}
	return nil
}

// nextSotw is the response of type i the stream is due, and the version
// it sends; nil when none is due. It records the response as sent.
func (s *Service) nextSotw(st *stream, i int, t *typeSnap) (*encoded, *typeSnap) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ts := &st.types[i]
	if !ts.subscribed || ts.pending != "" || t.version == ts.held {
		return nil, nil
	}
	partial := !ts.sub.covers(t)
	if ts.sentVersion == t.version && !((partial || ts.sentPartial) && ts.namesChanged) {
		return nil, nil
	}
	if partial && !st.node.proxyless && (i == typeRoute || i == typeEndpoint) {
		s.metrics.transient(transientNamesPending)
		return nil, nil
	}
	body := t.body
	if partial {
		body = subsetBody(t, pick(t, &ts.sub))
	}
	nonce := st.nextNonce()
	ts.pending, ts.last, ts.sentAt, ts.namesChanged, ts.held = nonce, nonce, time.Now(), false, ""
	ts.sentVersion, ts.sentPartial, ts.sentNames = t.version, partial, t.names
	return sotwResponse(body, nonce), t
}

// pick lists the indexes of t's resources that sub names.
func pick(t *typeSnap, sub *subscription) []int32 {
	var out []int32
	if sub.size() < len(t.names.names) {
		for n := range sub.plus {
			if i, ok := t.names.index[n]; ok {
				out = append(out, i)
			}
		}
		if sub.base != nil {
			for _, n := range sub.base.names {
				if i, ok := t.names.index[n]; ok && sub.contains(n) {
					out = append(out, i)
				}
			}
		}
		sortIndexes(out)
		return out
	}
	for i, n := range t.names.names {
		if sub.contains(n) {
			out = append(out, int32(i))
		}
	}
	return out
}
