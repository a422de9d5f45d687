package translator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// The translation a change causes is part of the change's trace.
func TestTranslationJoinsTheTraceOfTheChange(t *testing.T) {
	b := bustest.New(t)
	putYAML(t, b, serviceCase)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	cfg := DefaultConfig()
	cfg.Debounce = time.Millisecond
	s, err := New(cfg, b, nil, WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	runService(t, s)
	waitReady(t, s)

	changeCtx, change := tp.Tracer("test").Start(context.Background(), "change route")
	rs, err := manifest.ReadResources(strings.NewReader(routeYAML), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(changeCtx, bus.Resources, bus.ResourceKey("HTTPRoute", "default", "web"), rs[0]); err != nil {
		t.Fatal(err)
	}
	change.End()
	want := change.SpanContext().TraceID()
	sp := testkit.EventuallyValue(t, 10*time.Second, fmt.Sprintf("a translation span in trace %s", want), func() (sdktrace.ReadOnlySpan, bool) {
		for _, sp := range spans.Ended() {
			if sp.Name() == "translate gateway" && sp.SpanContext().TraceID() == want {
				return sp, true
			}
		}
		return nil, false
	})
	if sp.Parent().SpanID() != change.SpanContext().SpanID() {
		t.Errorf("translation span's parent is %s, want the change's span %s", sp.Parent().SpanID(), change.SpanContext().SpanID())
	}
}
