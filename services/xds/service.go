package xds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	secretservice "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/gatewire/gatewire/pkg/bus"
)

// meterName is the OpenTelemetry meter of the service's metrics.
const meterName = "gatewire/xds"

// Service is the xds service. Create it with [New] and start it with
// [Service.Run]; its methods are safe for concurrent use.
type Service struct {
	cfg       Config
	log       *slog.Logger
	cache     cache.SnapshotCache
	callbacks *callbacks
	feed      *feed
	dataPlane *dataPlane

	mu       sync.Mutex
	listener net.Listener // set by WithListener, or by Run
	running  bool
}

// Option changes how [New] builds a Service.
type Option func(*options) error

type options struct {
	listener net.Listener
	meters   metric.MeterProvider
}

// WithListener makes Run serve on l instead of listening on
// GATEWIRE_XDS_ADDRESS. Run closes l when it returns.
func WithListener(l net.Listener) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("xds: WithListener: nil listener")
		}
		o.listener = l
		return nil
	}
}

// WithMeterProvider records the service's metrics with p instead of the
// global OpenTelemetry meter provider.
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(o *options) error {
		if p == nil {
			return errors.New("xds: WithMeterProvider: nil provider")
		}
		o.meters = p
		return nil
	}
}

// New checks cfg and builds the service over b. log may be nil to discard
// logs.
func New(cfg Config, b *bus.Bus, log *slog.Logger, opts ...Option) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("xds: nil bus")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := options{meters: otel.GetMeterProvider()}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	replica, err := cfg.replica()
	if err != nil {
		return nil, err
	}
	snapshots := newSplitCache(cacheLogger{log})
	dp := newDataPlane(b, log, replica, servedVersion(snapshots))
	meter := o.meters.Meter(meterName)
	cb, err := newCallbacks(log, meter, dp)
	if err != nil {
		return nil, fmt.Errorf("xds: metrics: %w", err)
	}
	rejected, err := meter.Int64Counter("gatewire_xds_snapshots_rejected_total",
		metric.WithDescription("xds bucket values that were not served because they did not decode or were not consistent, by gateway"))
	if err != nil {
		return nil, fmt.Errorf("xds: metrics: %w", err)
	}
	return &Service{
		cfg:       cfg,
		log:       log,
		cache:     snapshots,
		callbacks: cb,
		dataPlane: dp,
		listener:  o.listener,
		feed: &feed{
			bus: b, cache: snapshots, log: log, rejected: rejected, dataPlane: dp,
			served: map[string]string{},
		},
	}, nil
}

// Ready reports whether the initial sync of the xds bucket is done: from
// then on every gateway in the bucket with a good snapshot is served.
func (s *Service) Ready() bool { return s.feed.synced.Load() }

// Addr is the address the xDS server listens on; nil before Run listens.
func (s *Service) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener == nil {
		return nil
	}
	return s.listener.Addr()
}

// Run serves xDS and follows the xds bucket until ctx is done, then returns
// nil after the open streams end (or are cut after
// GATEWIRE_XDS_SHUTDOWN_TIMEOUT). It returns an error when it cannot listen
// or the gRPC server fails. Run may be called once.
func (s *Service) Run(ctx context.Context) error {
	l, err := s.listen()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	grpcServer := s.grpcServer(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.feed.run(ctx) })
	wg.Go(func() { s.dataPlane.run(ctx) })
	served := make(chan error, 1)
	go func() { served <- grpcServer.Serve(l) }()
	s.log.Info("xds server listening", "address", l.Addr().String())

	select {
	case <-ctx.Done():
		s.stop(grpcServer)
		<-served
		err = nil
	case err = <-served:
		err = fmt.Errorf("xds: serve on %s: %w", l.Addr(), err)
		cancel()
		grpcServer.Stop()
	}
	wg.Wait()
	return err
}

// listen takes the listener given with WithListener, or listens on the
// configured address.
func (s *Service) listen() (net.Listener, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return nil, errors.New("xds: Run called twice")
	}
	s.running = true
	if s.listener != nil {
		return s.listener, nil
	}
	l, err := net.Listen("tcp", s.cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("GATEWIRE_XDS_ADDRESS %q: %w", s.cfg.Address, err)
	}
	s.listener = l
	return l, nil
}

// grpcServer builds the gRPC server with ADS and the per-type services
// (LDS, RDS, CDS, EDS, SDS), state-of-the-world and delta, over one cache.
// Its streams end when ctx is done.
func (s *Service) grpcServer(ctx context.Context) *grpc.Server {
	g := grpc.NewServer(
		grpc.MaxConcurrentStreams(s.cfg.MaxConcurrentStreams),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			Time:    s.cfg.KeepaliveTime,
			Timeout: s.cfg.KeepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             s.cfg.KeepaliveMinTime,
			PermitWithoutStream: true,
		}),
	)
	watcher := holdingCache{SnapshotCache: s.cache, hash: nodeHash{}}
	xds := server.NewServer(ctx, watcher, s.callbacks, sotw.WithLogger(cacheLogger{s.log}))
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(g, xds)
	listenerservice.RegisterListenerDiscoveryServiceServer(g, xds)
	routeservice.RegisterRouteDiscoveryServiceServer(g, xds)
	clusterservice.RegisterClusterDiscoveryServiceServer(g, xds)
	endpointservice.RegisterEndpointDiscoveryServiceServer(g, xds)
	secretservice.RegisterSecretDiscoveryServiceServer(g, xds)
	return g
}

// stop ends the gRPC server gracefully, or at once after the shutdown
// timeout.
func (s *Service) stop(g *grpc.Server) {
	done := make(chan struct{})
	go func() {
		g.GracefulStop()
		close(done)
	}()
	t := time.NewTimer(s.cfg.ShutdownTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.log.Warn("xds streams still open at shutdown; cutting them", "timeout", s.cfg.ShutdownTimeout)
		g.Stop()
		<-done
	}
}

// servedVersion reads the version of a type that c serves to a gateway's
// Envoys; "" when it has no snapshot for the gateway. Its proxyless
// clients are served the same version.
func servedVersion(c cache.SnapshotCache) func(gateway, typeURL string) string {
	return func(gateway, typeURL string) string {
		snap, err := c.GetSnapshot(gateway)
		if err != nil {
			return ""
		}
		return snap.GetVersion(typeURL)
	}
}
