package xds

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/grpc/stats"
)

// StreamStatus is what [Service.Streams] tells of one open xDS stream.
type StreamStatus struct {
	// NodeID and Gateway are the node's id and cluster (<namespace>/<gateway>);
	// both are empty until the stream's first request.
	NodeID, Gateway string
	Proxyless       bool
	// Delta is set for an incremental stream, unset for state of the world.
	Delta          bool
	ConnectedSince time.Time
	// Types are the types the client subscribed to, in the order they are
	// sent.
	Types []TypeStatus
}

// TypeStatus is the state of one type on one stream.
type TypeStatus struct {
	TypeURL string
	// Served is the version the stream's gateway serves now; Sent the one
	// the client was last sent (or, on a new state-of-the-world stream,
	// says it has); Acked the last one it acknowledged.
	Served, Sent, Acked string
	// NACK is the client's last rejection; nil when it rejected nothing.
	NACK *NACKStatus
}

// NACKStatus is a client's rejection of a version.
type NACKStatus struct {
	Version string
	// Detail is the client's error detail, cut at 1 KiB.
	Detail string
	At     time.Time
}

// Streams lists the open streams, oldest first. It copies a few fields of
// each stream and holds no lock while the list is built; it is safe to
// call at any time, from any goroutine.
func (s *Service) Streams() []StreamStatus {
	streams := s.store.all()
	out := make([]StreamStatus, 0, len(streams))
	for _, st := range streams {
		out = append(out, st.status())
	}
	slices.SortFunc(out, func(a, b StreamStatus) int { return a.ConnectedSince.Compare(b.ConnectedSince) })
	return out
}

func (st *stream) status() StreamStatus {
	snap := st.view()
	st.mu.Lock()
	defer st.mu.Unlock()
	out := StreamStatus{NodeID: st.node.id, Gateway: st.node.cluster, Proxyless: st.node.proxyless,
		Delta: st.delta, ConnectedSince: st.since}
	for i := range numTypes {
		ts := &st.types[i]
		if !ts.subscribed {
			continue
		}
		t := TypeStatus{TypeURL: typeURLs[i], Sent: ts.sentVersion, Acked: ts.acked}
		if snap != nil {
			t.Served = snap.types[i].version
		}
		if n := ts.nacked; n != nil {
			t.NACK = &NACKStatus{Version: n.version, Detail: n.detail, At: n.at}
		}
		out.Types = append(out.Types, t)
	}
	return out
}

// watchdog closes the streams whose send has not returned within the
// send timeout, until ctx is done: their client does not read. It reads
// one atomic value per stream, a few times per timeout.
func (s *Service) watchdog(ctx context.Context) {
	every := min(max(s.cfg.SendTimeout/4, 10*time.Millisecond), time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		deadline := time.Now().Add(-s.cfg.SendTimeout).UnixNano()
		for _, st := range s.store.all() {
			if started := st.sending.Load(); started != 0 && started < deadline {
				st.markStuck()
			}
		}
	}
}

// connLogger logs gRPC connections at debug level: which client came and
// when it went. gRPC does not say why a connection ended; the streams'
// own close lines (and gatewire_xds_stream_closes_total) do.
type connLogger struct{ log *slog.Logger }

type connKey struct{}

type connInfo struct {
	remote string
	since  time.Time
}

func (c connLogger) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (c connLogger) HandleRPC(context.Context, stats.RPCStats)                       {}

func (c connLogger) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, &connInfo{remote: info.RemoteAddr.String(), since: time.Now()})
}

func (c connLogger) HandleConn(ctx context.Context, s stats.ConnStats) {
	info, _ := ctx.Value(connKey{}).(*connInfo)
	if info == nil {
		return
	}
	switch s.(type) {
	case *stats.ConnBegin:
		c.log.Debug("xds connection opened", "remote", info.remote)
	case *stats.ConnEnd:
		c.log.Debug("xds connection closed", "remote", info.remote, "duration", time.Since(info.since).Round(time.Millisecond))
	}
}

// staleKey is a series of gatewire_xds_stream_stale_seconds.
type staleKey struct{ gateway, typeURL string }

// staleness is, per gateway (its metric label) and type, the longest time
// an open stream has not acknowledged the version served now: since that
// version was set, or since the stream opened when it is younger. Streams
// that acknowledged it count 0, so a series exists for every type a
// stream of the gateway asked for.
func (s *store) staleness(now time.Time) map[staleKey]float64 {
	out := map[staleKey]float64{}
	for _, st := range s.all() {
		snap := st.view()
		cluster := st.nodeCluster()
		if snap == nil || cluster == "" {
			continue
		}
		label := s.label(cluster)
		st.mu.Lock()
		for i := range numTypes {
			ts := &st.types[i]
			if !ts.subscribed {
				continue
			}
			k := staleKey{label, typeURLs[i]}
			v := 0.0
			if t := snap.types[i]; ts.acked != t.version {
				since := t.setAt
				if st.since.After(since) {
					since = st.since
				}
				v = now.Sub(since).Seconds()
			}
			out[k] = max(out[k], v)
		}
		st.mu.Unlock()
	}
	return out
}
