package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/gatewire/gatewire/pkg/buildinfo"
)

// registerBuildInfo exports gatewire_build_info{version,commit,service} 1.
func registerBuildInfo(p metric.MeterProvider, service string) error {
	attrs := metric.WithAttributes(
		attribute.String("version", buildinfo.Version()),
		attribute.String("commit", buildinfo.Commit()),
		attribute.String("service", service),
	)
	_, err := p.Meter("gatewire/telemetry").Int64ObservableGauge("gatewire_build_info",
		metric.WithDescription("1, labelled with the version and commit of the binary and the service it runs"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(1, attrs)
			return nil
		}))
	if err != nil {
		return fmt.Errorf("telemetry: gatewire_build_info: %w", err)
	}
	return nil
}
