package xds

import (
	"time"

	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
)

// nack is one rejection of a pushed version by one client.
type nack struct {
	gateway, version, typeURL, nodeID string
	detail                            *rpcstatus.Status
	stream                            uint64
}

// now is the clock of the streams.
func now() time.Time { return time.Now() }

// send sends one response of type i on the stream. t is the version it
// carries; its push latency is recorded when t was set after the stream
// opened (a response to a new client is not a push). The watchdog closes
// the stream when the send does not return within the send timeout.
func (s *Service) send(st *stream, i int, msg *encoded, t *typeSnap) error {
	st.sending.Store(time.Now().UnixNano())
	err := st.grpc.SendMsg(msg)
	st.sending.Store(0)
	if err != nil {
		return err
	}
	s.proxies.changed(st)
	var pushed time.Time
	if t.setAt.After(st.since) {
		pushed = t.setAt
	}
	s.metrics.sent(s.store.label(st.node.cluster), typeURLs[i], pushed)
	return nil
}

// answered records the client's answer to the last response of type i,
// which carried version: an ACK, or a NACK when detail is set. applied is
// the version the client reports applying ("" for delta clients: the sent
// version is taken). It is called with st.mu held.
func (s *Service) answered(st *stream, i int, ts *typeState, version, applied string, detail *rpcstatus.Status) {
	gateway := s.store.label(st.node.cluster)
	url := typeURLs[i]
	if detail != nil {
		ts.held = version
		ts.nacked = &nackRecord{version: version, detail: truncate(detail.GetMessage(), maxStreamDetail), at: time.Now()}
		s.metrics.nacked(gateway, url)
		s.dataPlane.nacked(nack{gateway: st.node.cluster, version: version, typeURL: url,
			nodeID: st.node.id, detail: detail, stream: st.id})
		s.proxies.changed(st)
		return
	}
	if applied == "" {
		applied = version
	}
	ts.acked, ts.ackedAt = applied, time.Now()
	s.proxies.changed(st)
	s.metrics.acked(gateway, url, ts.sentAt)
	s.log.Debug("xds ack", "gateway", st.node.cluster, "version", applied, "type_url", url, "node", st.node.id)
	s.dataPlane.acked(st.node.cluster, applied, url)
}
