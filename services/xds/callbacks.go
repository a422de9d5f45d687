package xds

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errNoCluster is returned to a client whose node names no cluster: it
// cannot be told which gateway's configuration it should get.
var errNoCluster = status.Error(codes.InvalidArgument,
	"node.cluster is empty: set it to <namespace>/<gateway>, the gateway whose configuration this Envoy serves")

// callbacks watch the xDS streams: they refuse nodes without a cluster,
// count every ACK and NACK per gateway (node.cluster), version and type,
// and report them, and closed streams, to the data-plane status, which
// logs NACKs. A request is an ACK or NACK when it answers the nonce of the
// last response of its type on its stream; the answer to a nonce is
// counted once. The version of an ACK is the one the client reports
// applying (delta clients report none: the version sent with the nonce is
// used); the version of a NACK is the one sent with the rejected nonce.
//
// The go-control-plane server calls them synchronously from the goroutines
// of many streams; they are safe for that.
type callbacks struct {
	log       *slog.Logger
	acks      metric.Int64Counter
	nacks     metric.Int64Counter
	dataPlane *dataPlane // told of every ACK, NACK and closed stream

	mu sync.Mutex
	// Open streams by ID. State-of-the-world and delta streams are numbered
	// separately, so they are kept apart.
	sotw  map[int64]*streamState
	delta map[int64]*streamState
}

var _ server.Callbacks = (*callbacks)(nil)

// streamState is what the callbacks remember of one open stream.
type streamState struct {
	// node is the last node the stream sent; clients may send it only in
	// their first request.
	node *core.Node
	// sent is the last response of each type URL not yet answered.
	sent map[string]sentResponse
}

type sentResponse struct{ nonce, version string }

// answer is the part of a request (state-of-the-world or delta) that the
// callbacks look at.
type answer struct {
	delta   bool
	node    *core.Node
	typeURL string
	nonce   string
	version string
	detail  *rpcstatus.Status
}

// nack is one rejection of a pushed version by one client.
type nack struct {
	gateway, version, typeURL, nodeID string
	detail                            *rpcstatus.Status
	stream                            streamID
}

func newCallbacks(log *slog.Logger, meter metric.Meter, dp *dataPlane) (*callbacks, error) {
	acks, err := meter.Int64Counter("gatewire_xds_acks_total",
		metric.WithDescription("xDS responses acknowledged by Envoys, by gateway, version and type_url"))
	if err != nil {
		return nil, err
	}
	nacks, err := meter.Int64Counter("gatewire_xds_nacks_total",
		metric.WithDescription("xDS responses rejected by Envoys, by gateway, version and type_url"))
	if err != nil {
		return nil, err
	}
	return &callbacks{
		log: log, acks: acks, nacks: nacks, dataPlane: dp,
		sotw: map[int64]*streamState{}, delta: map[int64]*streamState{},
	}, nil
}

// OnStreamOpen implements server.Callbacks.
func (c *callbacks) OnStreamOpen(_ context.Context, id int64, _ string) error {
	c.open(c.sotw, id)
	return nil
}

// OnStreamClosed implements server.Callbacks.
func (c *callbacks) OnStreamClosed(id int64, node *core.Node) { c.close(c.sotw, id, node, false) }

// OnDeltaStreamOpen implements server.Callbacks.
func (c *callbacks) OnDeltaStreamOpen(_ context.Context, id int64, _ string) error {
	c.open(c.delta, id)
	return nil
}

// OnDeltaStreamClosed implements server.Callbacks.
func (c *callbacks) OnDeltaStreamClosed(id int64, node *core.Node) { c.close(c.delta, id, node, true) }

// OnStreamRequest implements server.Callbacks.
func (c *callbacks) OnStreamRequest(id int64, req *discovery.DiscoveryRequest) error {
	return c.request(c.sotw, id, answer{
		node: req.GetNode(), typeURL: req.GetTypeUrl(), nonce: req.GetResponseNonce(),
		version: req.GetVersionInfo(), detail: req.GetErrorDetail(),
	})
}

// OnStreamResponse implements server.Callbacks.
func (c *callbacks) OnStreamResponse(_ context.Context, id int64, _ *discovery.DiscoveryRequest, resp *discovery.DiscoveryResponse) {
	c.sent(c.sotw, id, resp.GetTypeUrl(), sentResponse{nonce: resp.GetNonce(), version: resp.GetVersionInfo()})
}

// OnStreamDeltaRequest implements server.Callbacks.
func (c *callbacks) OnStreamDeltaRequest(id int64, req *discovery.DeltaDiscoveryRequest) error {
	return c.request(c.delta, id, answer{
		delta: true, node: req.GetNode(), typeURL: req.GetTypeUrl(), nonce: req.GetResponseNonce(),
		detail: req.GetErrorDetail(),
	})
}

// OnStreamDeltaResponse implements server.Callbacks.
func (c *callbacks) OnStreamDeltaResponse(id int64, _ *discovery.DeltaDiscoveryRequest, resp *discovery.DeltaDiscoveryResponse) {
	c.sent(c.delta, id, resp.GetTypeUrl(), sentResponse{nonce: resp.GetNonce(), version: resp.GetSystemVersionInfo()})
}

// OnFetchRequest implements server.Callbacks. REST is not served; a fetch
// is refused like a stream when its node has no cluster.
func (c *callbacks) OnFetchRequest(_ context.Context, req *discovery.DiscoveryRequest) error {
	if req.GetNode().GetCluster() == "" {
		return errNoCluster
	}
	return nil
}

// OnFetchResponse implements server.Callbacks.
func (c *callbacks) OnFetchResponse(*discovery.DiscoveryRequest, *discovery.DiscoveryResponse) {}

func (c *callbacks) open(streams map[int64]*streamState, id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	streams[id] = &streamState{sent: map[string]sentResponse{}}
}

func (c *callbacks) close(streams map[int64]*streamState, id int64, node *core.Node, delta bool) {
	c.mu.Lock()
	delete(streams, id)
	c.mu.Unlock()
	c.dataPlane.closed(streamID{delta: delta, id: id})
	c.log.Debug("xds stream closed", "stream", id, "delta", delta,
		"gateway", node.GetCluster(), "node", node.GetId())
}

func (c *callbacks) sent(streams map[int64]*streamState, id int64, typeURL string, r sentResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := streams[id]; st != nil {
		st.sent[typeURL] = r
	}
}

// request refuses a stream whose node has no cluster and counts the ACK or
// NACK a request carries.
func (c *callbacks) request(streams map[int64]*streamState, id int64, a answer) error {
	node, answered, first := c.match(streams, id, a)
	if node.GetCluster() == "" {
		c.log.Warn("xds client refused: node has no cluster", "stream", id, "delta", a.delta, "node", node.GetId())
		return errNoCluster
	}
	if first {
		c.connected(id, a.delta, node)
	}
	if answered == nil {
		return nil
	}
	if a.detail != nil {
		c.nacked(nack{gateway: node.GetCluster(), version: answered.version, typeURL: a.typeURL,
			nodeID: node.GetId(), detail: a.detail, stream: streamID{delta: a.delta, id: id}})
		return nil
	}
	version := a.version
	if version == "" {
		version = answered.version
	}
	c.acks.Add(context.Background(), 1, metric.WithAttributes(attrs(node.GetCluster(), version, a.typeURL)...))
	c.log.Debug("xds ack", "gateway", node.GetCluster(), "version", version, "type_url", a.typeURL, "node", node.GetId())
	c.dataPlane.acked(node.GetCluster(), version, a.typeURL)
	return nil
}

// connected logs a stream's first node, with a warning when it looks like
// a gRPC client that is not marked proxyless: it is served the Envoy
// listeners, none of which it can use.
func (c *callbacks) connected(id int64, delta bool, node *core.Node) {
	proxyless := isProxyless(node)
	c.log.Info("xds client connected", "stream", id, "delta", delta,
		"gateway", node.GetCluster(), "node", node.GetId(), "proxyless", proxyless)
	if !proxyless && strings.HasPrefix(node.GetUserAgentName(), "gRPC") {
		c.log.Warn("gRPC xds client not marked proxyless: it gets the Envoy listeners",
			"gateway", node.GetCluster(), "node", node.GetId(), "user_agent", node.GetUserAgentName(),
			"hint", "set "+ProxylessMetadataKey+": true in the node metadata of its xDS bootstrap")
	}
}

// match records the request's node on its stream and returns the stream's
// node, the response the request answers (nil when it answers none, or one
// already answered) and whether this is the stream's first node.
func (c *callbacks) match(streams map[int64]*streamState, id int64, a answer) (*core.Node, *sentResponse, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := streams[id]
	if st == nil { // not opened through the callbacks; keep it anyway
		st = &streamState{sent: map[string]sentResponse{}}
		streams[id] = st
	}
	first := false
	if a.node != nil {
		first = st.node == nil
		st.node = a.node
	}
	last, ok := st.sent[a.typeURL]
	if !ok || a.nonce == "" || a.nonce != last.nonce {
		return st.node, nil, first
	}
	delete(st.sent, a.typeURL)
	return st.node, &last, first
}

// nacked counts a NACK and hands it to the data-plane status, which logs
// it. Holding the rejected version back is the cache's part
// ([holdingCache]): the server asks it for every request.
func (c *callbacks) nacked(n nack) {
	c.nacks.Add(context.Background(), 1, metric.WithAttributes(attrs(n.gateway, n.version, n.typeURL)...))
	c.dataPlane.nacked(n)
}

func attrs(gateway, version, typeURL string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("gateway", gateway),
		attribute.String("version", version),
		attribute.String("type_url", typeURL),
	}
}
