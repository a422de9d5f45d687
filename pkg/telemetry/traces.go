package telemetry

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP protocols of the specification.
const (
	ProtocolGRPC         = "grpc"
	ProtocolHTTPProtobuf = "http/protobuf"
	protocolHTTPJSON     = "http/json"
)

func lookupEnv(name string) string { return strings.TrimSpace(os.Getenv(name)) }

// traceExporter is the OTLP exporter the environment asks for, or nil
// when no endpoint is set or the export is turned off. See the package doc.
func traceExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	switch v := strings.ToLower(getenv("OTEL_SDK_DISABLED")); v {
	case "", "false":
	case "true":
		return nil, nil
	default:
		return nil, fmt.Errorf("telemetry: OTEL_SDK_DISABLED: %q: want true or false", v)
	}
	switch v := getenv("OTEL_TRACES_EXPORTER"); v {
	case "", "otlp":
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("telemetry: OTEL_TRACES_EXPORTER: %q: want otlp or none", v)
	}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	name, protocol := traceProtocol(getenv)
	switch protocol {
	case ProtocolGRPC:
		exp, err := otlptracegrpc.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp/grpc exporter: %w", err)
		}
		return exp, nil
	case ProtocolHTTPProtobuf:
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp/http exporter: %w", err)
		}
		return exp, nil
	case protocolHTTPJSON:
		return nil, fmt.Errorf("telemetry: %s: %q is not supported: want %s or %s", name, protocol, ProtocolGRPC, ProtocolHTTPProtobuf)
	}
	return nil, fmt.Errorf("telemetry: %s: %q: want %s or %s", name, protocol, ProtocolGRPC, ProtocolHTTPProtobuf)
}

// traceProtocol is the OTLP protocol of traces and the variable that set
// it: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else http/protobuf.
func traceProtocol(getenv func(string) string) (variable, protocol string) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := getenv(name); v != "" {
			return name, v
		}
	}
	return "OTEL_EXPORTER_OTLP_PROTOCOL", ProtocolHTTPProtobuf
}
