package xds

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// TestPushSpan checks that a snapshot set is one "xds push" span of the
// tracer gatewire/xds, a child of the span that published the snapshot.
func TestPushSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	b := bustest.New(t)
	h := startWith(t, b, "xds-0", func(*Config) {}, WithTracerProvider(tp))

	ctx, span := tp.Tracer("test").Start(context.Background(), "publish")
	if _, err := publisherOf(b).Publish(ctx, xdstest.Sample(gateway, "v1")); err != nil {
		t.Fatal(err)
	}
	span.End()
	h.waitVersion(t, gateway, "v1")
	var push *tracetest.SpanStub
	testkit.Eventually(t, wait, "the push span", func() bool {
		for _, s := range exp.GetSpans() {
			if s.Name == "xds push" {
				push = &s
				return true
			}
		}
		return false
	})
	if push.InstrumentationScope.Name != tracerName {
		t.Errorf("tracer %q, want %q", push.InstrumentationScope.Name, tracerName)
	}
	if push.Parent.SpanID() != span.SpanContext().SpanID() || push.SpanContext.TraceID() != span.SpanContext().TraceID() {
		t.Errorf("push span's parent %s in trace %s, want the publish span %s in trace %s",
			push.Parent.SpanID(), push.SpanContext.TraceID(), span.SpanContext().SpanID(), span.SpanContext().TraceID())
	}
}
