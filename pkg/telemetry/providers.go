package telemetry

import (
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Providers are the tracer and meter providers a service records with.
// Each service's options embed them: New starts from Global and the
// service's WithTracerProvider and WithMeterProvider options replace them.
type Providers struct {
	Tracers trace.TracerProvider
	Meters  metric.MeterProvider
}

// Global returns the global OpenTelemetry providers, read now.
func Global() Providers {
	return Providers{Tracers: otel.GetTracerProvider(), Meters: otel.GetMeterProvider()}
}

// SetTracers replaces Tracers with tp; a nil tp is an error that names
// option, the option that gave it.
func (p *Providers) SetTracers(option string, tp trace.TracerProvider) error {
	if tp == nil {
		return errors.New(option + ": nil provider")
	}
	p.Tracers = tp
	return nil
}

// SetMeters replaces Meters with mp; a nil mp is an error that names
// option.
func (p *Providers) SetMeters(option string, mp metric.MeterProvider) error {
	if mp == nil {
		return errors.New(option + ": nil provider")
	}
	p.Meters = mp
	return nil
}
