package translator

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
)

// The translator's metrics, recorded with the service's meter provider (see
// WithMeterProvider) under the meter "gatewire/translator":
//
//	gatewire_translator_translation_duration_seconds{gateway,work}  histogram  time to compute a gateway's outputs (work: full, endpoints, rewrite), writes excluded
//	gatewire_translator_changes_pending                             gauge      gateways and GatewayClasses waiting to be translated
//	gatewire_translator_statuses_pending                            gauge      statuses of the latest translations not yet checked against the bus and written (see writeStatusChunk)
//	gatewire_translator_outputs_written_total{bucket,op}            counter    outputs written (op: put, delete), by bucket
//
// The gateway label is <namespace>/<name>: as many values as the
// installation has gateways, which its operators choose, never its
// clients.
type translatorMetrics struct {
	duration metric.Float64Histogram
	outputs  metric.Int64Counter
	pending  atomic.Int64
	statuses atomic.Int64
}

// durationBuckets are the boundaries of the translation histogram, in
// seconds: an endpoint update of a small gateway takes well under a
// millisecond, a full translation of 10,000 routes about two seconds.
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// newMetrics creates the instruments of one service with p.
func newMetrics(p metric.MeterProvider) *translatorMetrics {
	m := &translatorMetrics{}
	meter := p.Meter("gatewire/translator")
	m.duration, _ = meter.Float64Histogram("gatewire_translator_translation_duration_seconds",
		metric.WithDescription("time to compute the outputs of a gateway, by gateway and work (full, endpoints, rewrite); writes to the bus excluded"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	m.outputs, _ = meter.Int64Counter("gatewire_translator_outputs_written_total",
		metric.WithDescription("outputs written to the bus, by bucket and op (put, delete)"))
	_, _ = meter.Int64ObservableGauge("gatewire_translator_changes_pending",
		metric.WithDescription("gateways and GatewayClasses waiting to be translated"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(m.pending.Load())
			return nil
		}))
	_, _ = meter.Int64ObservableGauge("gatewire_translator_statuses_pending",
		metric.WithDescription("statuses of the latest translations not yet checked against the bus and written"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(m.statuses.Load())
			return nil
		}))
	return m
}

// observeTranslation records the time one gateway's translation took.
func (m *translatorMetrics) observeTranslation(ctx context.Context, gw types.NamespacedName, work string, d time.Duration) {
	m.duration.Record(ctx, d.Seconds(), metric.WithAttributes(
		attribute.String("gateway", gw.String()), attribute.String("work", work)))
}

// observePending records how many gateways and classes wait, and how many
// statuses.
func (m *translatorMetrics) observePending(st *session) {
	m.pending.Store(int64(len(st.gateways) + len(st.classes)))
	statuses := 0
	for _, job := range st.statusJobs {
		statuses += len(job.out.Statuses) - job.i
	}
	m.statuses.Store(int64(statuses))
}

// observeOutput counts one output written.
func (m *translatorMetrics) observeOutput(ctx context.Context, b bus.Bucket, op string) {
	m.outputs.Add(ctx, 1, metric.WithAttributes(attribute.String("bucket", string(b)), attribute.String("op", op)))
}
