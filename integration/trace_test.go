package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/telemetry/telemetrytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestOneChangeOneTrace runs nats-server, the provider, the translator and
// the xds service as processes that export their spans over OTLP (the
// provider and xds over HTTP, the translator over gRPC, to receivers in
// this process), edits a route, and checks that the edit yields one trace
// across the processes: the provider's publish, then the translation of
// the gateway as its child, then the push.
func TestOneChangeOneTrace(t *testing.T) {
	tmp := t.TempDir()
	resources := filepath.Join(tmp, "resources")
	if err := os.MkdirAll(resources, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(resources, "gateway.yaml"), gatewayYAML)
	write(t, filepath.Join(resources, "backend.yaml"), backendYAML)
	write(t, filepath.Join(resources, "route.yaml"), routeYAML("/cart"))
	natsAddr := freeAddr(t)
	host, port, _ := strings.Cut(natsAddr, ":")
	nats := start(t, "nats-server", nil, "-a", host, "-p", port, "-js", "-sd", filepath.Join(tmp, "nats"))
	waitListening(t, nats, natsAddr, 20*time.Second)

	overHTTP, overGRPC := telemetrytest.NewHTTP(t), telemetrytest.NewGRPC(t)
	xdsAddr := freeAddr(t)
	pki := newXDSPKI(t, tmp)
	common := []string{"GATEWIRE_NATS_URL=nats://" + natsAddr, "GATEWIRE_SYSTEM=trace", "OTEL_BSP_SCHEDULE_DELAY=100"}
	env := map[string][]string{
		"provider":   {"GATEWIRE_PROVIDER_DIR=" + resources, "OTEL_EXPORTER_OTLP_ENDPOINT=" + overHTTP.Endpoint()},
		"translator": {"OTEL_EXPORTER_OTLP_ENDPOINT=" + overGRPC.Endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		"xds":        append(pki.xdsEnv(), "GATEWIRE_XDS_ADDRESS="+xdsAddr, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+overHTTP.Endpoint()+"/v1/traces"),
	}
	for _, name := range []string{"provider", "translator", "xds"} {
		admin := freeAddr(t)
		p := start(t, name, append(append([]string{"GATEWIRE_ADMIN_ADDRESS=" + admin}, common...), env[name]...))
		waitReady(t, p, admin, 30*time.Second)
	}
	envoy := connectEnvoyWith(t, xdsAddr, "shop/edge", pki.creds(t, "shop/edge"))
	envoy.waitFor(t, 20*time.Second, "the route to /cart", func(s snapshot) bool {
		return routeTo(s, "shop.example.com", "/cart") != ""
	})

	write(t, filepath.Join(resources, "route.yaml"), routeYAML("/basket"))
	envoy.waitFor(t, 20*time.Second, "the route to /basket", func(s snapshot) bool {
		return routeTo(s, "shop.example.com", "/basket") != ""
	})
	both := func() []telemetrytest.Span { return append(overHTTP.Spans(), overGRPC.Spans()...) }
	var publish, translate telemetrytest.Span
	testkit.EventuallyValue(t, 20*time.Second, "a translation of shop/edge in the trace of a publish of the provider", func() (string, bool) {
		spans := both()
		var ok bool
		publish, translate, ok = changeTrace(spans)
		return telemetrytest.Format(spans), ok
	})
	t.Logf("trace %s: %s %q (%s) → %s %q (%s)", publish.TraceID, publish.Service, publish.Name, publish.Scope,
		translate.Service, translate.Name, translate.Scope)

	// The xds service exports its spans in batches of its own, so the push
	// may arrive after the translation did: wait for it as for the others.
	var push telemetrytest.Span
	testkit.EventuallyValue(t, 20*time.Second, "an \"xds push\" span of gatewire/xds in trace "+translate.TraceID, func() (string, bool) {
		spans := both()
		var ok bool
		push, ok = findSpan(spans, func(s telemetrytest.Span) bool {
			return s.Service == "gatewire-xds" && s.Scope == "gatewire/xds" && s.Name == "xds push" && s.TraceID == translate.TraceID
		})
		return telemetrytest.Format(spans), ok
	})
	if push.ParentSpanID != translate.SpanID {
		t.Errorf("the xds push span's parent is %s, want the translation %s", push.ParentSpanID, translate.SpanID)
	}
	t.Logf("→ %s %q (%s)", push.Service, push.Name, push.Scope)
}

// changeTrace finds a publish of the file provider and the translation of
// shop/edge it caused: a span of the translator whose parent it is.
func changeTrace(spans []telemetrytest.Span) (publish, translate telemetrytest.Span, ok bool) {
	for _, tr := range spans {
		if tr.Service != "gatewire-translator" || tr.Scope != "gatewire/translator" || tr.Name != "translate gateway" ||
			tr.Attributes["gatewire.gateway"] != "shop/edge" {
			continue
		}
		p, found := findSpan(spans, func(s telemetrytest.Span) bool {
			return s.SpanID == tr.ParentSpanID && s.TraceID == tr.TraceID && s.Service == "gatewire-provider" &&
				s.Name == "provider.file.publish"
		})
		if found {
			return p, tr, true
		}
	}
	return telemetrytest.Span{}, telemetrytest.Span{}, false
}

func findSpan(spans []telemetrytest.Span, match func(telemetrytest.Span) bool) (telemetrytest.Span, bool) {
	for _, s := range spans {
		if match(s) {
			return s, true
		}
	}
	return telemetrytest.Span{}, false
}
