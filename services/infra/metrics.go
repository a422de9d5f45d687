package infra

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/gatewire/gatewire/services/infra/kube"
)

// The infra service's metrics, recorded with the global meter provider
// under the meter "gatewire/infra":
//
//	gatewire_infra_proxies_applied_total{mode,op}   counter  gateways whose Envoy was applied (op apply) or removed (op remove)
//	gatewire_infra_errors_total{mode,op,reason}     counter  what failed: op apply, remove or prune; reason invalid (a value that cannot be provisioned, not retried) or failed (retried)
//
// mode is host or kubernetes.
type infraMetrics struct {
	applied metric.Int64Counter
	errors  metric.Int64Counter
}

var instruments = sync.OnceValue(func() *infraMetrics {
	meter := otel.GetMeterProvider().Meter("gatewire/infra")
	m := &infraMetrics{}
	m.applied, _ = meter.Int64Counter("gatewire_infra_proxies_applied_total",
		metric.WithDescription("gateways whose Envoy was applied (op apply) or removed (op remove), by mode"))
	m.errors, _ = meter.Int64Counter("gatewire_infra_errors_total",
		metric.WithDescription("failures by mode, op (apply, remove, prune) and reason (invalid: not retried; failed: retried)"))
	return m
})

// observeApply counts one apply or remove and its outcome.
func observeApply(ctx context.Context, mode string, c change, err error) {
	op := "apply"
	if c.proxy == nil {
		op = "remove"
	}
	if err == nil {
		instruments().applied.Add(ctx, 1, metric.WithAttributes(attribute.String("mode", mode), attribute.String("op", op)))
		// The error series exist from the first apply, at 0, so that a
		// rate over them is 0 rather than nothing.
		observeErrors(ctx, mode, op, "failed", 0)
		observeErrors(ctx, mode, op, "invalid", 0)
		return
	}
	if ctx.Err() != nil {
		return // stopping, not failing
	}
	reason := "failed"
	if errors.Is(err, kube.ErrInvalid) {
		reason = "invalid"
	}
	observeError(ctx, mode, op, reason)
}

// observeError counts one failure.
func observeError(ctx context.Context, mode, op, reason string) {
	observeErrors(ctx, mode, op, reason, 1)
}

func observeErrors(ctx context.Context, mode, op, reason string, n int64) {
	instruments().errors.Add(ctx, n, metric.WithAttributes(
		attribute.String("mode", mode), attribute.String("op", op), attribute.String("reason", reason)))
}
