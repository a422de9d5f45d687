package xds

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	secretservice "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errNoCluster is returned to a client whose node names no cluster: it
// cannot be told which gateway's configuration it should get.
var errNoCluster = status.Error(codes.InvalidArgument,
	"node.cluster is empty: set it to <namespace>/<gateway>, the gateway whose configuration this Envoy serves")

var streamIDs atomic.Uint64

// register serves ADS and the per-type services on g.
func (s *Service) register(g *grpc.Server) {
	discovery.RegisterAggregatedDiscoveryServiceServer(g, adsServer{s})
	listenerservice.RegisterListenerDiscoveryServiceServer(g, ldsServer{typeServer: typeServer{s, typeListener}})
	routeservice.RegisterRouteDiscoveryServiceServer(g, rdsServer{typeServer: typeServer{s, typeRoute}})
	clusterservice.RegisterClusterDiscoveryServiceServer(g, cdsServer{typeServer: typeServer{s, typeCluster}})
	endpointservice.RegisterEndpointDiscoveryServiceServer(g, edsServer{typeServer: typeServer{s, typeEndpoint}})
	secretservice.RegisterSecretDiscoveryServiceServer(g, sdsServer{typeServer: typeServer{s, typeSecret}})
}

type (
	sotwStream  = grpc.BidiStreamingServer[discovery.DiscoveryRequest, discovery.DiscoveryResponse]
	deltaStream = grpc.BidiStreamingServer[discovery.DeltaDiscoveryRequest, discovery.DeltaDiscoveryResponse]
)

type adsServer struct{ s *Service }

func (a adsServer) StreamAggregatedResources(g sotwStream) error { return a.s.serveSotw(g, -1) }
func (a adsServer) DeltaAggregatedResources(g deltaStream) error { return a.s.serveDelta(g, -1) }

// typeServer serves the state-of-the-world and delta streams of one type.
type typeServer struct {
	s   *Service
	typ int
}

func (t typeServer) sotw(g sotwStream) error   { return t.s.serveSotw(g, t.typ) }
func (t typeServer) delta(g deltaStream) error { return t.s.serveDelta(g, t.typ) }

type ldsServer struct {
	typeServer
	listenerservice.UnimplementedListenerDiscoveryServiceServer
}

func (l ldsServer) StreamListeners(g sotwStream) error { return l.sotw(g) }
func (l ldsServer) DeltaListeners(g deltaStream) error { return l.delta(g) }

type rdsServer struct {
	typeServer
	routeservice.UnimplementedRouteDiscoveryServiceServer
}

func (r rdsServer) StreamRoutes(g sotwStream) error { return r.sotw(g) }
func (r rdsServer) DeltaRoutes(g deltaStream) error { return r.delta(g) }

type cdsServer struct {
	typeServer
	clusterservice.UnimplementedClusterDiscoveryServiceServer
}

func (c cdsServer) StreamClusters(g sotwStream) error { return c.sotw(g) }
func (c cdsServer) DeltaClusters(g deltaStream) error { return c.delta(g) }

type edsServer struct {
	typeServer
	endpointservice.UnimplementedEndpointDiscoveryServiceServer
}

func (e edsServer) StreamEndpoints(g sotwStream) error { return e.sotw(g) }
func (e edsServer) DeltaEndpoints(g deltaStream) error { return e.delta(g) }

type sdsServer struct {
	typeServer
	secretservice.UnimplementedSecretDiscoveryServiceServer
}

func (d sdsServer) StreamSecrets(g sotwStream) error { return d.sotw(g) }
func (d sdsServer) DeltaSecrets(g deltaStream) error { return d.delta(g) }

func (s *Service) serveSotw(g sotwStream, only int) error {
	st := s.newStream(g, false, only)
	return s.serve(st, func(ctx context.Context, reqs chan<- func() error) error {
		for {
			req, err := g.Recv()
			if err != nil {
				return err
			}
			select {
			case reqs <- func() error { return s.handleSotw(st, req) }:
			case <-ctx.Done():
				return contextStatus(ctx)
			}
		}
	}, s.pushSotw)
}

func (s *Service) serveDelta(g deltaStream, only int) error {
	st := s.newStream(g, true, only)
	return s.serve(st, func(ctx context.Context, reqs chan<- func() error) error {
		for {
			req, err := g.Recv()
			if err != nil {
				return err
			}
			select {
			case reqs <- func() error { return s.handleDelta(st, req) }:
			case <-ctx.Done():
				return contextStatus(ctx)
			}
		}
	}, s.pushDelta)
}

func (s *Service) newStream(g grpc.ServerStream, delta bool, only int) *stream {
	return &stream{
		id: streamIDs.Add(1), delta: delta, only: only, since: time.Now(), grpc: g,
		wake: make(chan struct{}, 1), stuck: make(chan struct{}),
	}
}

// serve runs one stream: recv reads its requests, push sends what is due.
// The stream's loop runs in a goroutine of its own, so that the handler
// can end the stream when a send is stuck (the watchdog closes st.stuck):
// returning from the handler cancels the stream, which ends the send.
func (s *Service) serve(st *stream, recv func(context.Context, chan<- func() error) error, push func(*stream) error) error {
	s.store.add(st)
	defer s.store.remove(st)
	ctx, cancel := context.WithCancel(st.grpc.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.loop(ctx, st, recv, push) }()
	select {
	case err := <-done:
		return s.closed(st, err)
	case <-st.stuck:
		s.metrics.timedOut(s.store.label(st.nodeCluster()))
		return s.closed(st, errSendTimeout)
	case <-s.stopping:
		return s.closed(st, errShutdown)
	}
}

var (
	errSendTimeout = status.Error(codes.DeadlineExceeded, "xds: a response was not taken in time; the stream is closed")
	errShutdown    = status.Error(codes.Unavailable, "xds: the server is stopping")
)

// loop reads requests and wakes, and sends what is due after each.
func (s *Service) loop(ctx context.Context, st *stream, recv func(context.Context, chan<- func() error) error, push func(*stream) error) error {
	reqs := make(chan func() error)
	recvDone := make(chan error, 1)
	go func() { recvDone <- recv(ctx, reqs) }()
	for {
		select {
		case handle := <-reqs:
			if err := handle(); err != nil {
				return err
			}
		case err := <-recvDone:
			return err
		case <-st.wake:
		case <-ctx.Done():
			return contextStatus(ctx)
		}
		if err := push(st); err != nil {
			return err
		}
	}
}

// contextStatus is the status of a stream whose context ended: Canceled
// or DeadlineExceeded.
func contextStatus(ctx context.Context) error {
	return status.FromContextError(ctx.Err()).Err()
}

// closed logs and counts why a stream ended and returns what its handler
// returns.
func (s *Service) closed(st *stream, err error) error {
	reason, level := closeClient, "debug"
	switch {
	case errors.Is(err, errSendTimeout):
		reason, level = closeSendTimeout, "warn"
	case errors.Is(err, errShutdown):
		reason = closeShutdown
	case status.Code(err) == codes.InvalidArgument:
		reason, level = closeInvalid, "warn"
	case status.Code(err) == codes.PermissionDenied || status.Code(err) == codes.Unauthenticated:
		reason, level = closeDenied, "warn"
	case err == nil || errors.Is(err, io.EOF):
		err = nil
	case status.Code(err) == codes.Canceled || status.Code(err) == codes.DeadlineExceeded ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		// The client cancelled the stream or its deadline passed. The
		// stream ends with that status, not with OK, which a client still
		// reading would take for the server ending the stream.
	default:
		reason, level = closeConnection, "info" // its connection broke
	}
	s.metrics.closed(reason)
	if s.dataPlane != nil {
		s.dataPlane.closed(st.id)
	}
	if s.proxies != nil {
		s.proxies.closed(st)
	}
	st.mu.Lock()
	node := st.node
	st.mu.Unlock()
	attrs := []any{"stream", st.id, "delta", st.delta, "gateway", node.cluster, "node", node.id, "reason", reason}
	if err != nil {
		attrs = append(attrs, "error", err)
	}
	switch level {
	case "warn":
		s.log.Warn("xds stream closed", attrs...)
	case "info":
		s.log.Info("xds stream closed", attrs...)
	default:
		s.log.Debug("xds stream closed", attrs...)
	}
	return err
}

func (st *stream) nodeCluster() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.node.cluster
}

// requestType is the index of a request's type: the stream's own on a
// per-type service, where a request may leave type_url empty. A type the
// server does not serve is -1: such requests are ignored.
func (s *Service) requestType(st *stream, url string) (int, error) {
	if st.only >= 0 {
		if url != "" && url != typeURLs[st.only] {
			return -1, status.Errorf(codes.InvalidArgument, "type_url %q on the %s stream", truncate(url, 200), typeURLs[st.only])
		}
		return st.only, nil
	}
	i := typeIndex(url)
	if i < 0 {
		s.metrics.transient(transientUnknownType)
		s.log.Debug("xds request of a type not served", "stream", st.id, "type_url", truncate(url, 200))
	}
	return i, nil
}

// maxNodeCluster bounds a node's cluster: <namespace>/<gateway>, each at
// most 253 characters.
const maxNodeCluster = 2*253 + 1

// first takes the node of a stream's first request: it must name a
// cluster that the client's certificate names too (see
// [Service.authorize]), which attaches the stream to that gateway for its
// life. Later requests may leave the node out; one that names another
// cluster ends the stream (see [Service.again]).
func (s *Service) first(st *stream, n *core.Node) error {
	if st.entry.Load() != nil {
		return s.again(st, n)
	}
	if n.GetCluster() == "" {
		s.log.Warn("xds client refused: node has no cluster", "stream", st.id, "delta", st.delta, "node", truncate(n.GetId(), 200))
		return errNoCluster
	}
	if len(n.GetCluster()) > maxNodeCluster {
		s.log.Warn("xds client refused: node cluster too long", "stream", st.id, "node", truncate(n.GetId(), 200), "length", len(n.GetCluster()))
		return status.Errorf(codes.InvalidArgument, "node.cluster is %d bytes long; a gateway is <namespace>/<gateway>", len(n.GetCluster()))
	}
	if err := s.authorize(st, n.GetCluster()); err != nil {
		s.log.Warn("xds client refused: its certificate does not name the gateway it asks for", "stream", st.id, "delta", st.delta,
			"gateway", truncate(n.GetCluster(), 200), "node", truncate(n.GetId(), 200), "error", err)
		return err
	}
	info := newNodeInfo(n)
	st.mu.Lock()
	st.node = info
	st.mu.Unlock()
	e := s.store.join(st, info.cluster)
	st.entry.Store(e)
	s.proxies.opened(st, info.cluster)
	if e.envoy.Load() == nil {
		s.metrics.transient(transientNoSnapshot)
	}
	s.log.Info("xds client connected", "stream", st.id, "delta", st.delta,
		"gateway", info.cluster, "node", truncate(info.id, 200), "proxyless", info.proxyless)
	if !info.proxyless && strings.HasPrefix(info.userAgent, "gRPC") {
		s.log.Warn("gRPC xds client not marked proxyless: it gets the Envoy listeners",
			"gateway", info.cluster, "node", truncate(info.id, 200), "user_agent", truncate(info.userAgent, 200),
			"hint", "set "+ProxylessMetadataKey+": true in the node metadata of its xDS bootstrap")
	}
	return nil
}

// again checks the node of a later request of a stream: a stream serves
// one gateway for its life, so a node that names another cluster ends it
// with PermissionDenied; nothing of the other gateway is served.
func (s *Service) again(st *stream, n *core.Node) error {
	c := n.GetCluster()
	if c == "" {
		return nil
	}
	st.mu.Lock()
	attached := st.node.cluster
	st.mu.Unlock()
	if c == attached {
		return nil
	}
	s.log.Warn("xds client refused: a request names another gateway than the stream's", "stream", st.id,
		"gateway", attached, "asked", truncate(c, 200), "node", truncate(n.GetId(), 200))
	return status.Errorf(codes.PermissionDenied, "xds: node.cluster %q refused: this stream serves %s; open a new stream for another gateway",
		truncate(c, 200), attached)
}
