package bus

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The bus's metrics, recorded with the global meter provider (set by
// package telemetry) under the meter "gatewire/bus":
//
//	gatewire_bus_writes_total{bucket,op}        counter  values and deletions this process wrote
//	gatewire_bus_write_errors_total{bucket}     counter  writes that failed (not those refused as stale)
//	gatewire_bus_bad_values_total{bucket}       counter  values this process read that did not decode (corrupt, foreign, too large)
//	gatewire_bus_writes_refused_total{bucket,op} counter writes the server refused because a bucket or the store is full
//	gatewire_bus_watch_pending_entries{bucket}  gauge    entries written to the bucket that a watch of this process has not handed to its reader yet
//	gatewire_bus_watch_lag_seconds{bucket}      gauge    how long the oldest of them has been waiting, at most; 0 when none is
//
// A process with several watches of one bucket reports the one furthest
// behind. Pending entries are those the server counts after the last
// entry it delivered to the watch, plus those delivered but not yet read
// from [Watcher.Updates]. The lag is the time since the later of the
// write of the newest entry read and the last moment the watch was
// caught up, so it is an upper bound of the age of the oldest entry
// waiting: each entry waiting was written after both.
type busMetrics struct {
	writes      metric.Int64Counter
	writeErrors metric.Int64Counter
	badValues   metric.Int64Counter
	refused     metric.Int64Counter
}

var (
	metricsOnce sync.Once
	meters      busMetrics
	watches     = watchSet{set: map[*watchStats]struct{}{}}
)

// instruments returns the bus's instruments, creating them on first use.
func instruments() *busMetrics {
	metricsOnce.Do(func() {
		m := otel.GetMeterProvider().Meter("gatewire/bus")
		meters.writes, _ = m.Int64Counter("gatewire_bus_writes_total",
			metric.WithDescription("values and deletions written to a bucket by this process, by bucket and op (put, delete)"))
		meters.writeErrors, _ = m.Int64Counter("gatewire_bus_write_errors_total",
			metric.WithDescription("writes to a bucket that failed, by bucket (writes refused because the stored value is newer are not counted)"))
		meters.badValues, _ = m.Int64Counter("gatewire_bus_bad_values_total",
			metric.WithDescription("values read from a bucket that did not decode (corrupt, foreign or too large), by bucket"))
		meters.refused, _ = m.Int64Counter("gatewire_bus_writes_refused_total",
			metric.WithDescription("writes the server refused because the bucket or the JetStream store is full, by bucket and op (put, delete)"))
		_, _ = m.Int64ObservableGauge("gatewire_bus_watch_pending_entries",
			metric.WithDescription("entries of a bucket that a watch of this process has not handed to its reader yet, by bucket (the watch furthest behind)"),
			metric.WithInt64Callback(watches.observePending))
		_, _ = m.Float64ObservableGauge("gatewire_bus_watch_lag_seconds",
			metric.WithDescription("at most how long the oldest entry a watch of this process has not handed to its reader has waited, by bucket (the watch furthest behind); 0 when it is caught up"),
			metric.WithFloat64Callback(watches.observeLag))
	})
	return &meters
}

func (m *busMetrics) wrote(ctx context.Context, bucket Bucket, op string, err error) {
	failed := int64(0)
	if err != nil {
		failed = 1
	} else {
		m.writes.Add(ctx, 1, metric.WithAttributes(attribute.String("bucket", string(bucket)), attribute.String("op", op)))
	}
	// Also 0 on success, so that the series exists before the first
	// failure and a rate over it is 0 rather than nothing.
	m.writeErrors.Add(ctx, failed, metric.WithAttributes(attribute.String("bucket", string(bucket))))
}

func (m *busMetrics) badValue(ctx context.Context, bucket Bucket) {
	m.badValues.Add(ctx, 1, metric.WithAttributes(attribute.String("bucket", string(bucket))))
}

func (m *busMetrics) refusedWrite(ctx context.Context, bucket Bucket, op string) {
	m.refused.Add(ctx, 1, metric.WithAttributes(attribute.String("bucket", string(bucket)), attribute.String("op", op)))
}

// watchStats is what one watch reports to the gauges.
type watchStats struct {
	bucket  Bucket
	updates chan *Entry
	// newest is the write time of the newest entry received (Unix ns),
	// caughtUp the last time nothing was pending, pending what the server
	// counted after the newest entry.
	newest, caughtUp atomic.Int64
	pending          atomic.Uint64
}

// observe records an entry received from the server.
func (s *watchStats) observe(written time.Time, pending uint64) {
	s.newest.Store(written.UnixNano())
	s.pending.Store(pending)
}

// behind is the number of entries waiting and the lag at now.
func (s *watchStats) behind(now time.Time) (uint64, time.Duration) {
	n := s.pending.Load() + uint64(len(s.updates))
	if n == 0 {
		s.caughtUp.Store(now.UnixNano())
		return 0, 0
	}
	since := max(s.newest.Load(), s.caughtUp.Load())
	return n, max(0, now.Sub(time.Unix(0, since)))
}

// watchSet holds the live watches of the process.
type watchSet struct {
	mu  sync.Mutex
	set map[*watchStats]struct{}
}

func (w *watchSet) add(bucket Bucket, updates chan *Entry) *watchStats {
	instruments()
	s := &watchStats{bucket: bucket, updates: updates}
	s.caughtUp.Store(time.Now().UnixNano())
	w.mu.Lock()
	w.set[s] = struct{}{}
	w.mu.Unlock()
	return s
}

func (w *watchSet) remove(s *watchStats) {
	w.mu.Lock()
	delete(w.set, s)
	w.mu.Unlock()
}

// lagging is how far the watches of a bucket are behind.
type lagging struct {
	pending uint64
	lag     time.Duration
}

// worst is, for each bucket with a watch, the largest pending count and
// lag of its watches.
func (w *watchSet) worst(now time.Time) map[Bucket]lagging {
	out := map[Bucket]lagging{}
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.set {
		n, lag := s.behind(now)
		cur := out[s.bucket]
		out[s.bucket] = lagging{pending: max(cur.pending, n), lag: max(cur.lag, lag)}
	}
	return out
}

func (w *watchSet) observePending(_ context.Context, o metric.Int64Observer) error {
	for bucket, b := range w.worst(time.Now()) {
		o.Observe(int64(b.pending), metric.WithAttributes(attribute.String("bucket", string(bucket))))
	}
	return nil
}

func (w *watchSet) observeLag(_ context.Context, o metric.Float64Observer) error {
	for bucket, b := range w.worst(time.Now()) {
		o.Observe(b.lag.Seconds(), metric.WithAttributes(attribute.String("bucket", string(bucket))))
	}
	return nil
}
