package xds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/telemetry"
)

// tracerName is the OpenTelemetry tracer of the service's spans.
const tracerName = "gatewire/xds"

// Service is the xds service. Create it with [New] and start it with
// [Service.Run]; its methods are safe for concurrent use.
type Service struct {
	cfg       Config
	log       *slog.Logger
	store     *store
	metrics   *metrics
	feed      *feed
	dataPlane *dataPlane
	proxies   *proxies
	// creds are the server's TLS credentials; nil in the insecure mode.
	creds credentials.TransportCredentials
	// stopping is closed when Run's context is done: every stream ends.
	stopping chan struct{}

	mu       sync.Mutex
	listener net.Listener // set by WithListener, or by Run
	running  bool
}

// Option changes how [New] builds a Service.
type Option func(*options) error

type options struct {
	listener net.Listener
	telemetry.Providers
}

// WithListener makes Run serve on l instead of listening on
// GATEWIRE_XDS_ADDRESS. l accepts plain TCP connections: the server does
// TLS on them itself (unless GATEWIRE_XDS_INSECURE). Run closes l when it
// returns.
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
	return func(o *options) error { return o.SetMeters("xds: WithMeterProvider", p) }
}

// WithTracerProvider records the service's spans with p instead of the
// global OpenTelemetry tracer provider.
func WithTracerProvider(p trace.TracerProvider) Option {
	return func(o *options) error { return o.SetTracers("xds: WithTracerProvider", p) }
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
	o := options{Providers: telemetry.Global()}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	replica, err := cfg.replica()
	if err != nil {
		return nil, err
	}
	st := newStore()
	m, err := newMetrics(o.Meters.Meter(meterName), st)
	if err != nil {
		return nil, fmt.Errorf("xds: metrics: %w", err)
	}
	var creds credentials.TransportCredentials
	if !cfg.XDSInsecure {
		if creds, err = serverCreds(cfg.TLS, log); err != nil {
			return nil, err
		}
	}
	dp := newDataPlane(b, log, replica, servedVersion(st))
	return &Service{
		cfg: cfg, log: log, store: st, metrics: m, dataPlane: dp, listener: o.listener, creds: creds,
		proxies:  newProxies(b, log, replica),
		stopping: make(chan struct{}),
		feed:     newFeed(b, st, log, m, o.Tracers.Tracer(tracerName), dp),
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

	grpcServer := s.grpcServer()
	var wg sync.WaitGroup
	wg.Go(func() { s.feed.run(ctx) })
	wg.Go(func() { s.dataPlane.run(ctx) })
	wg.Go(func() { s.proxies.run(ctx) })
	wg.Go(func() { s.watchdog(ctx) })
	served := make(chan error, 1)
	go func() { served <- grpcServer.Serve(l) }()
	if s.creds == nil {
		s.log.Warn("GATEWIRE_XDS_INSECURE=true: xDS is served in plaintext to any client, unauthenticated, every gateway's configuration and private keys included; for local development only",
			"address", l.Addr().String())
	} else {
		s.log.Info("xds server listening", "address", l.Addr().String(), "tls", "mTLS 1.3, client certificate required",
			"ca", s.cfg.CAFile, "trust_domain", s.cfg.Domain())
	}

	select {
	case <-ctx.Done():
		close(s.stopping)
		s.stop(grpcServer)
		<-served
		err = nil
	case err = <-served:
		err = fmt.Errorf("xds: serve on %s: %w", l.Addr(), err)
		cancel()
		close(s.stopping)
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

// HTTP/2 flow control of what clients send (requests): static windows
// large enough for an Envoy's request of every endpoint of thousands of
// clusters in one round trip. What the server sends is bounded by the
// clients' windows (Envoy's are 256 MiB by default).
const (
	initialWindowSize     = 1 << 20
	initialConnWindowSize = 4 << 20
	// writeBufferSize is each connection's write buffer, shared between
	// flushes so that idle connections hold none.
	writeBufferSize = 128 << 10
)

// grpcServer builds the gRPC server with ADS and the per-type services
// (LDS, RDS, CDS, EDS, SDS), state-of-the-world and delta. Responses are
// sent with [codec], which sends shared encoded bytes as they are.
func (s *Service) grpcServer() *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.ForceServerCodecV2(newCodec()),
		grpc.MaxRecvMsgSize(s.cfg.MaxRequestBytes),
		grpc.MaxConcurrentStreams(s.cfg.MaxConcurrentStreams),
		grpc.InitialWindowSize(initialWindowSize),
		grpc.InitialConnWindowSize(initialConnWindowSize),
		grpc.WriteBufferSize(writeBufferSize),
		grpc.SharedWriteBuffer(true),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			Time:    s.cfg.KeepaliveTime,
			Timeout: s.cfg.KeepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             s.cfg.KeepaliveMinTime,
			PermitWithoutStream: true,
		}),
		grpc.StatsHandler(connLogger{log: s.log}),
	}
	if s.creds != nil {
		opts = append(opts, grpc.Creds(s.creds))
	}
	g := grpc.NewServer(opts...)
	s.register(g)
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

// servedVersion reads the version of a type that st serves to a
// gateway's Envoys; "" when it has no snapshot for the gateway. Its
// proxyless clients are served the same version, the listeners aside.
func servedVersion(st *store) func(gateway, typeURL string) string {
	return func(gateway, typeURL string) string {
		snap := st.snapshot(gateway, false)
		i := typeIndex(typeURL)
		if snap == nil || i < 0 {
			return ""
		}
		return snap.types[i].version
	}
}
