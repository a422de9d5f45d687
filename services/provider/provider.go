// Package provider publishes Gateway API resources to the resources bucket,
// the input of the translator.
//
// It runs in one of two modes, chosen by GATEWIRE_PROVIDER_MODE:
//
//   - "file" (the default): the objects of a folder of YAML and JSON
//     manifests, GATEWIRE_PROVIDER_DIR, followed as files change (package
//     file; package manifest reads the files).
//   - "kubernetes": the objects of a Kubernetes cluster (package kube), with
//     the status bucket written back to them by the replica elected with a
//     Lease. The cluster is the one controller-runtime's config.GetConfig
//     finds: the kubeconfig named by --kubeconfig or KUBECONFIG, else the
//     in-cluster service account, else ~/.kube/config.
//
// The file mode has no status subresource to write to: it logs each change
// of the status bucket at level debug instead (status.Logger).
//
// This package does not import package kube: the kubernetes mode is passed
// to New with WithKubernetes(kube.Mode). So a binary of the file mode alone,
// cmd/provider-file, links neither client-go nor controller-runtime, and
// starts with 12 MiB less resident than cmd/provider, which has both modes.
//
// Every mode writes busv1.Resource values under bus.ResourceKey keys and sets
// Resource.origin, "file:<path>:<line>" or "kubernetes", so that each mode
// deletes only the keys it wrote when it resyncs.
package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/pkg/telemetry"
	"github.com/gatewire/gatewire/services/provider/file"
	"github.com/gatewire/gatewire/services/provider/status"
)

// Modes of the provider.
const (
	ModeFile       = "file"
	ModeKubernetes = "kubernetes"
)

// mode is what each mode of the provider implements.
type mode interface {
	Run(ctx context.Context) error
	Ready() bool
}

// Kubernetes is a running kubernetes mode (a *kube.Provider).
type Kubernetes interface {
	Run(ctx context.Context) error
	Ready() bool
	// StatusWrites returns how many status subresource writes it made.
	StatusWrites() uint64
}

// KubernetesMode builds the kubernetes mode from the provider's
// configuration, checked already: kube.Mode.
type KubernetesMode func(cfg Config, b *bus.Bus, log *slog.Logger, p telemetry.Providers) (Kubernetes, error)

// Service is a running provider.
type Service struct {
	mode  mode
	files *file.Provider // nil outside file mode
	kube  Kubernetes     // nil outside kubernetes mode
	bus   *bus.Bus
	log   *slog.Logger
}

// Option changes how [New] builds a Service.
type Option func(*options) error

type options struct {
	telemetry.Providers
	kubernetes KubernetesMode
}

// WithKubernetes gives the Service its kubernetes mode, m: kube.Mode. Without
// it, GATEWIRE_PROVIDER_MODE=kubernetes is an error.
func WithKubernetes(m KubernetesMode) Option {
	return func(o *options) error {
		if m == nil {
			return errors.New("provider: WithKubernetes: nil mode")
		}
		o.kubernetes = m
		return nil
	}
}

// WithTracerProvider records the service's spans with p instead of the
// global OpenTelemetry tracer provider (see pkg/telemetry).
func WithTracerProvider(p trace.TracerProvider) Option {
	return func(o *options) error { return o.SetTracers("provider: WithTracerProvider", p) }
}

// WithMeterProvider records the service's metrics with p instead of the
// global OpenTelemetry meter provider (see pkg/telemetry).
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(o *options) error { return o.SetMeters("provider: WithMeterProvider", p) }
}

// New returns the provider cfg describes, publishing to b. A nil log
// discards. In kubernetes mode it loads the cluster config, but does not
// connect yet.
func New(cfg Config, b *bus.Bus, log *slog.Logger, opts ...Option) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("provider: no bus")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.WarnDeprecated(log)
	o := options{Providers: telemetry.Global()}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if cfg.Mode == ModeKubernetes {
		return newKubernetes(cfg, b, log.With("mode", ModeKubernetes), o)
	}
	fileOpts := []file.Option{file.WithTracerProvider(o.Tracers)}
	if cfg.MaxFileBytes > 0 {
		fileOpts = append(fileOpts, file.WithMaxFileBytes(cfg.MaxFileBytes))
	}
	files, err := file.New(cfg.Dir, b, log.With("mode", ModeFile), fileOpts...)
	if err != nil {
		return nil, err
	}
	return &Service{mode: files, files: files, bus: b, log: log.With("mode", ModeFile)}, nil
}

func newKubernetes(cfg Config, b *bus.Bus, log *slog.Logger, o options) (*Service, error) {
	if o.kubernetes == nil {
		return nil, fmt.Errorf("GATEWIRE_PROVIDER_MODE: %q: this binary has the %q mode only; run provider (or gatewire standalone), which has both", ModeKubernetes, ModeFile)
	}
	k, err := o.kubernetes(cfg, b, log, o.Providers)
	if err != nil {
		return nil, err
	}
	return &Service{mode: k, kube: k, bus: b, log: log}, nil
}

// Run publishes resources until ctx is done, then returns nil. It retries bus
// and cluster errors and resyncs on its own; an error means it cannot go on.
// In file mode it also logs the changes of the status bucket.
func (s *Service) Run(ctx context.Context) error {
	if s.files == nil {
		return s.mode.Run(ctx)
	}
	store := status.NewStore(s.log)
	store.Subscribe(status.Logger(s.log))
	var wg sync.WaitGroup
	wg.Go(func() { _ = store.Follow(ctx, s.bus) })
	defer wg.Wait()
	return s.mode.Run(ctx)
}

// Ready reports whether the resources have been published once in full.
func (s *Service) Ready() bool { return s.mode.Ready() }

// Problems returns the current problems of the manifests in file mode (files
// that do not decode, objects defined twice), by path and line; nil in other
// modes. The caller owns the returned slice.
func (s *Service) Problems() []manifest.Problem {
	if s.files == nil {
		return nil
	}
	return s.files.Problems()
}

// StatusWrites returns how many status subresource writes the kubernetes
// mode made; 0 in other modes.
func (s *Service) StatusWrites() uint64 {
	if s.kube == nil {
		return 0
	}
	return s.kube.StatusWrites()
}
