// Package telemetry sets up OpenTelemetry for a gatewire process: metrics
// exported in the Prometheus format on the admin port, traces exported over
// OTLP, and W3C trace-context propagation, which pkg/bus carries in NATS
// headers.
//
// Spans are always recorded, even with no exporter, so that every bus
// message carries a traceparent that an operator can follow.
//
// # Traces
//
// Traces are exported when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, over the protocol that
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// names: "grpc" (OTLP/gRPC, port 4317 by convention) or "http/protobuf"
// (OTLP/HTTP, port 4318), the default of the OpenTelemetry specification.
// The exporters read the other variables of the specification themselves:
// the endpoints (OTEL_EXPORTER_OTLP_ENDPOINT is a base URL, /v1/traces is
// appended for HTTP; the traces endpoint is used as it is; an http://
// scheme means no TLS), _HEADERS, _TIMEOUT, _COMPRESSION, _INSECURE,
// _CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY, each also in a
// TRACES_ form that wins. OTEL_TRACES_EXPORTER=none turns the export off;
// OTEL_SDK_DISABLED=true turns it off too. OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES add to the process's resource;
// OTEL_TRACES_SAMPLER chooses the sampler (default: parent-based, always
// on). A value that is not one of these is an error that names the
// variable.
//
// Errors of the exporters (a collector that is away, say) are written to
// the process's logger as structured lines (message "telemetry error"),
// never as unstructured text in a JSON log stream.
//
// # Metrics
//
// Every process exports gatewire_build_info{version,commit,service} (always
// 1) besides what its services record, and the Go runtime and process
// collectors of the Prometheus client.
//
// # How a service gets its tracer and meter
//
// One way, in every service: [Setup], called once by each command (the
// services' mains through pkg/service, and gatewire standalone), installs
// the process's providers as the OpenTelemetry globals. A service's New
// takes the options WithTracerProvider and WithMeterProvider (provider,
// translator and xds both; infra, which records no spans, the second) and
// otherwise reads the global providers once, in New; it creates its tracer
// and its instruments from them there and keeps them on the Service, and
// hands them to the packages it is made of (the provider's file and kube
// modes take them as options). No service keeps a tracer or an instrument
// in a package variable, so tests give each service a recorder or a manual
// reader of its own and run in parallel. The tracer and meter names are
// "gatewire/<service>" or the package path.
//
// What belongs to the process rather than to a service stays global: the
// W3C propagator (pkg/bus injects and extracts trace context with it), and
// the metrics of pkg/bus (gatewire_bus_*), which count the writes and
// watches of every service of the process together.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/gatewire/gatewire/pkg/buildinfo"
)

// Telemetry holds the providers of one process.
type Telemetry struct {
	registry *prometheus.Registry
	meters   *sdkmetric.MeterProvider
	tracers  *sdktrace.TracerProvider
}

// Option changes what Setup does.
type Option func(*options)

type options struct {
	log    *slog.Logger
	getenv func(string) string
}

// WithLogger sends the errors of OpenTelemetry (failed exports, for one)
// to log; by default they are discarded.
func WithLogger(log *slog.Logger) Option {
	return func(o *options) { o.log = log }
}

// Setup installs global meter and tracer providers for the named process
// ("gatewire-translator"; the service label of gatewire_build_info is the
// name without "gatewire-"). It fails, naming the variable, when an OTEL_
// variable has a value it does not know. Call Shutdown when the process
// ends to flush traces.
func Setup(ctx context.Context, name string, opts ...Option) (*Telemetry, error) {
	o := options{log: slog.New(slog.DiscardHandler), getenv: lookupEnv}
	for _, opt := range opts {
		opt(&o)
	}
	res, err := processResource(ctx, name)
	if err != nil {
		return nil, err
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
	}
	t := &Telemetry{
		registry: registry,
		meters:   sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter), sdkmetric.WithResource(res)),
	}
	if err := registerBuildInfo(t.meters, strings.TrimPrefix(name, "gatewire-")); err != nil {
		return nil, err
	}
	tracerOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	exp, err := traceExporter(ctx, o.getenv)
	if err != nil {
		return nil, err
	}
	if exp != nil {
		tracerOpts = append(tracerOpts, sdktrace.WithBatcher(exp))
	}
	t.tracers = sdktrace.NewTracerProvider(tracerOpts...)
	installErrorHandler(o.log)
	otel.SetMeterProvider(t.meters)
	otel.SetTracerProvider(t.tracers)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return t, nil
}

// processResource names the process, with what OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES add.
func processResource(ctx context.Context, name string) (*resource.Resource, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(name), semconv.ServiceVersion(buildinfo.Version())),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTEL_RESOURCE_ATTRIBUTES or OTEL_SERVICE_NAME: %w", err)
	}
	return res, nil
}

// installErrorHandler sends OpenTelemetry's errors and its internal log to
// log, as structured lines.
func installErrorHandler(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("telemetry error", "error", err)
	}))
	otel.SetLogger(logr.FromSlogHandler(log.With("component", "opentelemetry").Handler()))
}

// Handler serves the metrics in the Prometheus text format.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

// Shutdown flushes and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return errors.Join(t.tracers.Shutdown(ctx), t.meters.Shutdown(ctx))
}
