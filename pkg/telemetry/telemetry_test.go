package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/gatewire/gatewire/pkg/telemetry"
	"github.com/gatewire/gatewire/pkg/telemetry/telemetrytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// clearEnv unsets the variables that choose the exporter, so that the
// tests do not depend on the environment they run in.
func clearEnv(t *testing.T) {
	for _, name := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(name, "")
	}
}

// exportOne sets telemetry up, records one span and flushes it.
func exportOne(t *testing.T, opts ...telemetry.Option) {
	t.Helper()
	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, "gatewire-test", opts...)
	if err != nil {
		t.Fatal(err)
	}
	_, span := otel.Tracer("gatewire/test").Start(ctx, "test span")
	span.End()
	if err := tel.Shutdown(ctx); err != nil {
		t.Logf("shutdown: %v", err)
	}
}

func waitSpan(t *testing.T, r *telemetrytest.Receiver) {
	t.Helper()
	spans := r.Wait(t, 10*time.Second, "the test span", func(s []telemetrytest.Span) bool { return len(s) > 0 })
	if s := spans[0]; s.Name != "test span" || s.Scope != "gatewire/test" || s.Service != "gatewire-test" {
		t.Errorf("span = %+v, want test span of gatewire/test from gatewire-test", s)
	}
}

// TestTracesOverHTTPByDefault checks that with only an endpoint set, spans
// go over OTLP/HTTP, the protocol the specification makes the default.
func TestTracesOverHTTPByDefault(t *testing.T) {
	clearEnv(t)
	r := telemetrytest.NewHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.Endpoint())
	exportOne(t)
	waitSpan(t, r)
}

// TestTracesOverGRPC checks OTEL_EXPORTER_OTLP_PROTOCOL=grpc.
func TestTracesOverGRPC(t *testing.T) {
	clearEnv(t)
	r := telemetrytest.NewGRPC(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.Endpoint())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	exportOne(t)
	waitSpan(t, r)
}

// TestTracesVariablesWin checks that the traces-specific variables win
// over the general ones: the general ones name a gRPC receiver, the
// traces ones an HTTP receiver with its full URL.
func TestTracesVariablesWin(t *testing.T) {
	clearEnv(t)
	grpcReceiver, httpReceiver := telemetrytest.NewGRPC(t), telemetrytest.NewHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", grpcReceiver.Endpoint())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", httpReceiver.Endpoint()+"/v1/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
	exportOne(t)
	waitSpan(t, httpReceiver)
	if n := len(grpcReceiver.Spans()); n != 0 {
		t.Errorf("the gRPC receiver got %d spans, want 0", n)
	}
}

// TestBadVariablesNamed checks that values Setup does not know are errors
// that name their variable.
func TestBadVariablesNamed(t *testing.T) {
	for name, value := range map[string]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL":        "thrift",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
		"OTEL_TRACES_EXPORTER":               "zipkin",
		"OTEL_SDK_DISABLED":                  "maybe",
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			t.Setenv(name, value)
			_, err := telemetry.Setup(context.Background(), "gatewire-test")
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("Setup with %s=%s: error %v, want one naming %s", name, value, err, name)
			}
		})
	}
}

// TestExportOff checks that OTEL_TRACES_EXPORTER=none sends nothing.
func TestExportOff(t *testing.T) {
	clearEnv(t)
	r := telemetrytest.NewHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.Endpoint())
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	exportOne(t)
	if n := len(r.Spans()); n != 0 {
		t.Fatalf("receiver got %d spans with the export off", n)
	}
}

// TestExportErrorsLogged exports to a port nobody listens on and checks
// that the failure is a structured line of the process's JSON log.
func TestExportErrorsLogged(t *testing.T) {
	clearEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
	var out testkit.LogBuffer
	exportOne(t, telemetry.WithLogger(slog.New(slog.NewJSONHandler(&out, nil))))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	found := false
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if rec["msg"] == "telemetry error" && strings.Contains(rec["error"].(string), addr) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no telemetry error naming %s in the log:\n%s", addr, out.String())
	}
}

// TestBuildInfo checks gatewire_build_info on the metrics handler.
func TestBuildInfo(t *testing.T) {
	clearEnv(t)
	tel, err := telemetry.Setup(context.Background(), "gatewire-test")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	var line string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "gatewire_build_info{") {
			line = l
		}
	}
	for _, want := range []string{`service="test"`, `version="dev"`, `commit="`, "} 1"} {
		if !strings.Contains(line, want) {
			t.Errorf("gatewire_build_info line %q lacks %s", line, want)
		}
	}
}
