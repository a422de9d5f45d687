package translator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/telemetry"
	"github.com/gatewire/gatewire/services/translator/shard"
)

// tracerName is the OpenTelemetry tracer of the service's spans.
const tracerName = "gatewire/translator"

// Retry delays after a session ends with an error.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 5 * time.Second
)

// Service is the translator service. Create it with [New] and start it,
// once, with [Service.Run]; Ready and ID are safe for concurrent use.
type Service struct {
	cfg     Config
	bus     *bus.Bus
	log     *slog.Logger
	tracer  trace.Tracer
	metrics *translatorMetrics
	// id is the replica's id; its outputs carry it in headerWriter.
	id      string
	members *shard.Membership
	ready   atomic.Bool
	// undecodableWait is the budget of the hold of unknown keys (see
	// syncGate); tests shorten it.
	undecodableWait time.Duration
}

// Option changes how [New] builds a Service.
type Option func(*options) error

type options struct {
	telemetry.Providers
}

// WithTracerProvider records the service's spans with p instead of the
// global OpenTelemetry tracer provider (see pkg/telemetry).
func WithTracerProvider(p trace.TracerProvider) Option {
	return func(o *options) error { return o.SetTracers("translator: WithTracerProvider", p) }
}

// WithMeterProvider records the service's metrics with p instead of the
// global OpenTelemetry meter provider (see pkg/telemetry).
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(o *options) error { return o.SetMeters("translator: WithMeterProvider", p) }
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
	cfg.WarnDeprecated(log)
	o := options{Providers: telemetry.Global()}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	id := cfg.ReplicaID
	if id == "" {
		id = defaultReplicaID()
	}
	members, err := shard.New(b, shard.Config{ID: id, Heartbeat: cfg.Heartbeat, TTL: cfg.MemberTTL}, log)
	if err != nil {
		return nil, err
	}
	return &Service{
		cfg:     cfg,
		bus:     b,
		log:     log.With("replica", id),
		tracer:  o.Tracers.Tracer(tracerName),
		metrics: newMetrics(o.Meters),
		id:      id,
		members: members,

		undecodableWait: undecodableWait,
	}, nil
}

// defaultReplicaID is the host name and a random suffix: unique to the
// process, and readable in the members bucket.
func defaultReplicaID() string {
	host, err := os.Hostname()
	if err != nil || !validReplicaID(host) || len(host) > maxReplicaID-9 {
		host = "translator"
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	return host + "-" + hex.EncodeToString(suffix[:])
}

// ID is the replica's name in the members bucket.
func (s *Service) ID() string { return s.id }

// Ready reports whether the service has read the resources bucket once and
// published the translation of every gateway. It stays true afterwards,
// also while the service resyncs after losing NATS: its outputs stay valid.
func (s *Service) Ready() bool { return s.ready.Load() }

// Run takes part in the membership and translates the gateways this
// replica owns until ctx is done; then it leaves the membership, so that
// the others take its gateways over at once, and returns nil. When a
// session with the bus fails (a write fails or times out) it starts over:
// it reads the resources bucket and the outputs again and makes them agree.
func (s *Service) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	left := make(chan struct{})
	go func() {
		defer close(left)
		_ = s.members.Run(ctx)
	}()
	defer func() {
		cancel()
		<-left
	}()
	delay := minRetry
	for {
		synced, err := s.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if synced {
			delay = minRetry
		}
		s.log.Warn("translator session ended, resyncing", "error", err, "retry_in", delay)
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
