package infra

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/gatewire/gatewire/services/infra/kubemode"
)

// The infra service's metrics, recorded with the service's meter provider
// (see WithMeterProvider) under the meter "gatewire/infra":
//
//	gatewire_infra_proxies_applied_total{mode,op}   counter  gateways whose Envoy was applied (op apply) or removed (op remove)
//	gatewire_infra_errors_total{mode,op,reason}     counter  what failed: op apply, remove or prune; reason invalid (a value that cannot be provisioned, not retried) or failed (retried)
//
// mode is host or kubernetes.
type infraMetrics struct {
	applied metric.Int64Counter
	errors  metric.Int64Counter
}

// newMetrics creates the instruments of one service with p.
func newMetrics(p metric.MeterProvider) *infraMetrics {
	meter := p.Meter("gatewire/infra")
	m := &infraMetrics{}
	m.applied, _ = meter.Int64Counter("gatewire_infra_proxies_applied_total",
		metric.WithDescription("gateways whose Envoy was applied (op apply) or removed (op remove), by mode"))
	m.errors, _ = meter.Int64Counter("gatewire_infra_errors_total",
		metric.WithDescription("failures by mode, op (apply, remove, prune) and reason (invalid: not retried; failed: retried)"))
	return m
}

// observeApply counts one apply or remove and its outcome.
func (m *infraMetrics) observeApply(ctx context.Context, mode string, c change, err error) {
	op := "apply"
	if c.proxy == nil {
		op = "remove"
	}
	if err == nil {
		m.applied.Add(ctx, 1, metric.WithAttributes(attribute.String("mode", mode), attribute.String("op", op)))
		// The error series exist from the first apply, at 0, so that a
		// rate over them is 0 rather than nothing.
		m.observeErrors(ctx, mode, op, "failed", 0)
		m.observeErrors(ctx, mode, op, "invalid", 0)
		return
	}
	if ctx.Err() != nil {
		return // stopping, not failing
	}
	reason := "failed"
	if errors.Is(err, kubemode.ErrInvalid) {
		reason = "invalid"
	}
	m.observeError(ctx, mode, op, reason)
}

// observeError counts one failure.
func (m *infraMetrics) observeError(ctx context.Context, mode, op, reason string) {
	m.observeErrors(ctx, mode, op, reason, 1)
}

func (m *infraMetrics) observeErrors(ctx context.Context, mode, op, reason string, n int64) {
	m.errors.Add(ctx, n, metric.WithAttributes(
		attribute.String("mode", mode), attribute.String("op", op), attribute.String("reason", reason)))
}
