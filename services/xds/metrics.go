package xds

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// meterName is the OpenTelemetry meter of the service's metrics.
const meterName = "gatewire/xds"

// Expected transients: counted, logged at debug at most.
const (
	// transientStaleNonce: a request answers a response older than the
	// last one of its type (the client had not seen the newer one yet).
	transientStaleNonce = "stale_nonce"
	// transientNamesPending: an Envoy names fewer routes or endpoints than
	// the snapshot holds; it will name them all once it applied the
	// listeners or clusters that need them.
	transientNamesPending = "names_pending"
	// transientUnknownType: a request of a type the server does not serve.
	transientUnknownType = "unknown_type"
	// transientNoSnapshot: a stream of a gateway that has no snapshot yet.
	transientNoSnapshot = "no_snapshot"
)

// Reasons a stream closes, for gatewire_xds_stream_closes_total.
const (
	closeClient      = "client"       // the client ended it, or its connection went
	closeSendTimeout = "send_timeout" // a response was not taken within GATEWIRE_XDS_SEND_TIMEOUT
	closeInvalid     = "invalid"      // a request the server refuses
	closeDenied      = "denied"       // a client asking for a gateway its certificate does not name
	closeShutdown    = "shutdown"     // the server is stopping
	closeConnection  = "connection"   // the stream's connection broke
)

// metrics are the service's instruments. Their attributes are bounded: a
// gateway is named only when the bucket holds it ("unknown" otherwise), a
// type URL only when it is served ("other" otherwise), and no version is
// an attribute.
type metrics struct {
	acks, nacks, responses, rejected metric.Int64Counter
	closes, sendTimeouts, transients metric.Int64Counter
	pushLatency, ackLatency          metric.Float64Histogram
	streamGauge                      metric.Int64ObservableGauge
	staleGauge                       metric.Float64ObservableGauge
	store                            *store
}

// latencyBuckets are the bounds of the latency histograms, in seconds.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

func newMetrics(meter metric.Meter, st *store) (*metrics, error) {
	m := &metrics{store: st}
	var err error
	counter := func(name, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = meter.Int64Counter(name, metric.WithDescription(desc))
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		if err != nil {
			return nil
		}
		var h metric.Float64Histogram
		h, err = meter.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(latencyBuckets...))
		return h
	}
	m.acks = counter("gatewire_xds_acks_total", "xDS responses acknowledged by clients, by gateway and type_url")
	m.nacks = counter("gatewire_xds_nacks_total", "xDS responses rejected by clients, by gateway and type_url")
	m.responses = counter("gatewire_xds_responses_total", "xDS responses sent, by gateway and type_url")
	m.rejected = counter("gatewire_xds_snapshots_rejected_total",
		"xds bucket entries not served because they did not decode, did not match their commit or were not consistent, by gateway")
	m.closes = counter("gatewire_xds_stream_closes_total", "xDS streams closed, by reason (client, connection, send_timeout, invalid, denied, shutdown)")
	m.sendTimeouts = counter("gatewire_xds_send_timeouts_total", "xDS responses a client did not take within the send timeout, by gateway")
	m.transients = counter("gatewire_xds_transients_total",
		"expected transient conditions of xDS streams, by kind (stale_nonce, names_pending, unknown_type, no_snapshot)")
	m.pushLatency = histogram("gatewire_xds_push_seconds", "time from a snapshot set to a response of it sent, by type_url")
	m.ackLatency = histogram("gatewire_xds_ack_seconds", "time from a response sent to its ACK, by type_url")
	if err != nil {
		return nil, err
	}
	m.streamGauge, err = meter.Int64ObservableGauge("gatewire_xds_streams",
		metric.WithDescription("open xDS streams, by gateway"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			for gw, n := range st.counts() {
				o.Observe(n, metric.WithAttributes(attribute.String("gateway", gw)))
			}
			return nil
		}))
	if err != nil {
		return nil, err
	}
	m.staleGauge, err = meter.Float64ObservableGauge("gatewire_xds_stream_stale_seconds",
		metric.WithDescription("longest time an open stream of the gateway has not acknowledged the version of the type served now (0 when every stream has), by gateway and type_url"),
		metric.WithUnit("s"),
		metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
			for k, v := range st.staleness(time.Now()) {
				o.Observe(v, metric.WithAttributes(attribute.String("gateway", k.gateway), attribute.String("type_url", k.typeURL)))
			}
			return nil
		}))
	return m, err
}

// typeLabel is url when it is a served type, else "other".
func typeLabel(url string) string {
	if typeIndex(url) < 0 {
		return "other"
	}
	return url
}

func gatewayType(gateway, url string) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("gateway", gateway), attribute.String("type_url", typeLabel(url)))
}

func (m *metrics) transient(kind string) {
	m.transients.Add(context.Background(), 1, metric.WithAttributes(attribute.String("kind", kind)))
}

func (m *metrics) closed(reason string) {
	m.closes.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
}

func (m *metrics) sent(gateway, url string, pushed time.Time) {
	ctx := context.Background()
	m.responses.Add(ctx, 1, gatewayType(gateway, url))
	if !pushed.IsZero() {
		m.pushLatency.Record(ctx, time.Since(pushed).Seconds(),
			metric.WithAttributes(attribute.String("type_url", typeLabel(url))))
	}
}

func (m *metrics) acked(gateway, url string, sentAt time.Time) {
	ctx := context.Background()
	m.acks.Add(ctx, 1, gatewayType(gateway, url))
	if !sentAt.IsZero() {
		m.ackLatency.Record(ctx, time.Since(sentAt).Seconds(),
			metric.WithAttributes(attribute.String("type_url", typeLabel(url))))
	}
}

func (m *metrics) nacked(gateway, url string) {
	m.nacks.Add(context.Background(), 1, gatewayType(gateway, url))
}

func (m *metrics) reject(gateway string) {
	m.rejected.Add(context.Background(), 1, metric.WithAttributes(attribute.String("gateway", gateway)))
}

func (m *metrics) timedOut(gateway string) {
	m.sendTimeouts.Add(context.Background(), 1, metric.WithAttributes(attribute.String("gateway", gateway)))
}
