package translator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
)

// tracerName is the OpenTelemetry tracer of the service's spans.
const tracerName = "gatewire/translator"

// Retry delays after a session ends with an error.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 5 * time.Second
)

// Service is the translator service. Create it with [New] and start it with
// [Service.Run]; Ready is safe for concurrent use.
type Service struct {
	cfg    Config
	bus    *bus.Bus
	log    *slog.Logger
	tracer trace.Tracer
	// owns reports whether this replica translates gateway. It is the seam
	// for sharing gateways among replicas; for now a replica owns them all.
	owns  func(gateway types.NamespacedName) bool
	ready atomic.Bool
}

// Option changes how [New] builds a Service.
type Option func(*options) error

type options struct {
	tracers trace.TracerProvider
}

// WithTracerProvider records the service's spans with p instead of the
// global OpenTelemetry tracer provider.
func WithTracerProvider(p trace.TracerProvider) Option {
	return func(o *options) error {
		if p == nil {
			return errors.New("translator: WithTracerProvider: nil provider")
		}
		o.tracers = p
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
		return nil, errors.New("translator: nil bus")
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o := options{tracers: otel.GetTracerProvider()}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	return &Service{
		cfg:    cfg,
		bus:    b,
		log:    log,
		tracer: o.tracers.Tracer(tracerName),
		owns:   func(types.NamespacedName) bool { return true },
	}, nil
}

// Ready reports whether the service has read the resources bucket once and
// published the translation of every gateway. It stays true afterwards,
// also while the service resyncs after losing NATS: its outputs stay valid.
func (s *Service) Ready() bool { return s.ready.Load() }

// Run translates until ctx is done, then returns nil. When a session with
// the bus fails (the watch ends, a write fails) it starts over: it reads
// the resources bucket and its own outputs again and makes them agree.
func (s *Service) Run(ctx context.Context) error {
	delay := minRetry
	for {
		synced, err := s.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if synced {
			delay = minRetry
		}
		s.log.Warn("translator session ended, resyncing", "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, maxRetry)
	}
}

// errWatchClosed ends a session whose watch of the resources bucket stopped.
var errWatchClosed = fmt.Errorf("translator: the watch of the resources bucket ended")
