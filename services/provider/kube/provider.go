package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/provider/status"
)

// Options configure a Provider. Zero durations take the defaults below.
type Options struct {
	// Namespaces restricts the namespaced objects published to these
	// namespaces (and Namespace objects to these names); empty for all.
	Namespaces []string
	// ControllerName is the spec.controllerName of gatewire's
	// GatewayClasses, and the controllerName of the route status entries
	// the provider owns.
	ControllerName string
	// LeaderElection elects the one replica that writes status, on the
	// Lease LeaseNamespace/LeaseName.
	LeaderElection bool
	LeaseName      string
	// LeaseNamespace is empty for the namespace the provider runs in (which
	// only works in a cluster).
	LeaseNamespace string
	LeaseDuration  time.Duration // default 15s
	RenewDeadline  time.Duration // default 10s
	RetryPeriod    time.Duration // default 2s
	// KeepLeaseOnStop leaves the Lease held when Run returns, so that
	// another replica waits for it to expire, as after a crash. The default
	// releases it, and another replica takes over within RetryPeriod.
	KeepLeaseOnStop bool
	// Tracers and Meters record the provider's spans and metrics; nil for
	// the global OpenTelemetry providers (see pkg/telemetry).
	Tracers trace.TracerProvider
	Meters  metric.MeterProvider
}

// Defaults of Options.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// ErrConfig marks errors of configuration: Run does not retry them.
var ErrConfig = errors.New("configuration")

// Provider publishes the objects of a cluster to the resources bucket and
// writes the status bucket back to them. Run does the work; the other
// methods are safe to call from any goroutine.
type Provider struct {
	opts  Options
	rest  *rest.Config
	bus   *bus.Bus
	log   *slog.Logger
	pub   *publisher
	store *status.Store

	writes, conflicts metric.Int64Counter
	ready, leading    atomic.Bool
	statusWrites      atomic.Uint64
	statusConflicts   atomic.Uint64

	// skipped holds the kinds reported as not served.
	skippedMu sync.Mutex
	skipped   map[string]bool

	// beforeStatusUpdate, when set (by tests), runs between the read of an
	// object and the write of its status.
	beforeStatusUpdate func(ctx context.Context, obj client.Object)
}

// New returns a Provider of the cluster cfg connects to, publishing to b. A
// nil log discards.
func New(cfg *rest.Config, b *bus.Bus, log *slog.Logger, opts Options) (*Provider, error) {
	if cfg == nil || b == nil {
		return nil, errors.New("kubernetes provider: no cluster config or no bus")
	}
	if opts.ControllerName == "" {
		return nil, errors.New("kubernetes provider: no controller name")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts.LeaseDuration = cmpOr(opts.LeaseDuration, DefaultLeaseDuration)
	opts.RenewDeadline = cmpOr(opts.RenewDeadline, DefaultRenewDeadline)
	opts.RetryPeriod = cmpOr(opts.RetryPeriod, DefaultRetryPeriod)
	if opts.Tracers == nil {
		opts.Tracers = otel.GetTracerProvider()
	}
	if opts.Meters == nil {
		opts.Meters = otel.GetMeterProvider()
	}
	meter := opts.Meters.Meter("github.com/gatewire/gatewire/services/provider/kube")
	writes, err := meter.Int64Counter("gatewire_provider_status_writes_total",
		metric.WithDescription("status subresource writes, by kind"))
	if err != nil {
		return nil, fmt.Errorf("kubernetes provider: metrics: %w", err)
	}
	conflicts, err := meter.Int64Counter("gatewire_provider_status_conflicts_total",
		metric.WithDescription("status subresource writes refused for a conflict and retried, by kind"))
	if err != nil {
		return nil, fmt.Errorf("kubernetes provider: metrics: %w", err)
	}
	rc := rest.CopyConfig(cfg)
	if rc.UserAgent == "" {
		rc.UserAgent = "gatewire-provider"
	}
	return &Provider{
		opts: opts, rest: rc, bus: b, log: log,
		pub: newPublisher(b, log, opts.Tracers.Tracer(tracerName)), store: status.NewStore(log),
		writes: writes, conflicts: conflicts, skipped: map[string]bool{},
	}, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Ready reports whether the cluster's objects have been published once in
// full.
func (p *Provider) Ready() bool { return p.ready.Load() }

// Leading reports whether this replica is the one that writes status.
func (p *Provider) Leading() bool { return p.leading.Load() }

// StatusWrites returns how many status subresource writes succeeded.
func (p *Provider) StatusWrites() uint64 { return p.statusWrites.Load() }

// StatusConflicts returns how many status writes met a conflict.
func (p *Provider) StatusConflicts() uint64 { return p.statusConflicts.Load() }

const (
	minRetry = 250 * time.Millisecond
	maxRetry = 10 * time.Second
)

// Run publishes and writes status until ctx is done; it then returns nil.
// When the manager stops on its own (the Lease was lost, the bus could not
// be read) it starts again after a delay. An error means the configuration
// cannot work.
func (p *Provider) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.store.Follow(ctx, p.bus) })
	defer wg.Wait()
	retry := minRetry
	for {
		start := time.Now()
		err := p.runManager(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrConfig) {
			return err
		}
		if time.Since(start) > maxRetry {
			retry = minRetry
		}
		p.log.Error("kubernetes provider stopped; starting again", "error", err, "delay", retry)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry):
			retry = min(2*retry, maxRetry)
		}
	}
}

// runManager runs one controller-runtime manager until ctx is done or it
// fails.
func (p *Provider) runManager(ctx context.Context) error {
	if err := p.pub.load(ctx); err != nil {
		return err
	}
	mgr, err := manager.New(p.rest, p.managerOptions())
	if err != nil {
		return fmt.Errorf("kubernetes provider: %w: %w", ErrConfig, err)
	}
	s, err := p.servedKinds(mgr)
	if err != nil {
		return err
	}
	if err := p.setup(ctx, mgr, s); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// managerOptions returns the manager's options. Secrets and ConfigMaps are
// never cached: the client reads them from the API server (see refs.go).
func (p *Provider) managerOptions() manager.Options {
	o := p.opts
	var namespaces map[string]cache.Config
	if len(o.Namespaces) > 0 {
		namespaces = map[string]cache.Config{}
		for _, ns := range o.Namespaces {
			namespaces[ns] = cache.Config{}
		}
	}
	return manager.Options{
		Scheme:                        newScheme(),
		Logger:                        logr.FromSlogHandler(p.log.Handler()),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                o.LeaderElection,
		LeaderElectionID:              o.LeaseName,
		LeaderElectionNamespace:       o.LeaseNamespace,
		LeaderElectionReleaseOnCancel: !o.KeepLeaseOnStop,
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
		Cache: cache.Options{
			DefaultNamespaces: namespaces,
			DefaultTransform:  cache.TransformStripManagedFields(),
		},
		Client: client.Options{Cache: &client.CacheOptions{
			DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
		}},
		// Several providers may run in one process (tests, standalone).
		Controller: config.Controller{SkipNameValidation: new(true)},
	}
}

// servedKinds returns the kinds the cluster serves. A kind it does not
// serve (its CRD is not installed) is reported once and skipped.
func (p *Provider) servedKinds(mgr manager.Manager) (served, error) {
	s := served{}
	for _, k := range kinds {
		_, err := mgr.GetRESTMapper().RESTMapping(k.gvk.GroupKind(), k.gvk.Version)
		switch {
		case meta.IsNoMatchError(err):
			p.skippedMu.Lock()
			if !p.skipped[k.name] {
				p.skipped[k.name] = true
				p.log.Warn("kind not served by the cluster; not watched until the provider restarts",
					"kind", k.name, "api_version", k.gvk.GroupVersion().String(), "error", err)
			}
			p.skippedMu.Unlock()
		case err != nil:
			return nil, fmt.Errorf("kubernetes provider: discover %s: %w", k.gvk.GroupVersion(), err)
		default:
			s[k.name] = k
		}
	}
	return s, nil
}

// watches reports whether objects of namespace ns are published.
func (p *Provider) watches(ns string) bool {
	return len(p.opts.Namespaces) == 0 || slices.Contains(p.opts.Namespaces, ns)
}
