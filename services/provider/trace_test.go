package provider_test

import (
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/provider"
)

// TestFileModeTracesWithTheGivenProvider checks that the file mode
// records its publish span with the tracer provider given to New, not the
// global one.
func TestFileModeTracesWithTheGivenProvider(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	s, err := provider.New(provider.Config{Mode: "file", Dir: quickstart}, bustest.New(t), nil, provider.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	run(t, s)
	testkit.Eventually(t, 10*time.Second, "a provider.file.publish span", func() bool {
		for _, sp := range spans.Ended() {
			if sp.Name() == "provider.file.publish" {
				return true
			}
		}
		return false
	})
	if _, err := provider.New(provider.Config{Mode: "file", Dir: quickstart}, bustest.New(t), nil, provider.WithTracerProvider(nil)); err == nil {
		t.Error("New accepted a nil tracer provider")
	}
}
