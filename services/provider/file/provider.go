package file

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/pkg/manifest/validate"
	"github.com/gatewire/gatewire/services/provider/syncmark"
)

// tracerName is the tracer of the provider's spans.
const tracerName = "github.com/gatewire/gatewire/services/provider/file"

const (
	// settleDelay is how long the folder must be quiet before it is scanned:
	// the events of one write (truncate, write, close, chmod) come within
	// microseconds of each other, and a route edit should reach Envoy in
	// milliseconds.
	settleDelay = 5 * time.Millisecond
	// completeDelay is how long a sync waits when every file named since the
	// last one is whole (see completions): long enough for fsnotify to
	// deliver the events the kernel queued with the one that said so.
	completeDelay = 500 * time.Microsecond
	// maxSettleDelay bounds the wait for a quiet folder during a long burst.
	maxSettleDelay = 100 * time.Millisecond
	// suspectDelay is how long a file that lost objects (emptied,
	// truncated, or shorter) must keep its content before those objects are
	// deleted; see folder.holds.
	suspectDelay = time.Second
	// minRetry and maxRetry bound the delay before a failed sync is retried.
	minRetry = 250 * time.Millisecond
	maxRetry = 5 * time.Second
)

// Provider publishes a folder of manifests to the resources bucket. Run does
// the work; Ready and Problems are safe to call from any goroutine.
type Provider struct {
	dir string
	bus *bus.Bus
	log *slog.Logger

	maxBytes int64

	tracer   trace.Tracer
	ready    atomic.Bool
	mu       sync.Mutex
	problems []manifest.Problem
}

// Option changes a Provider.
type Option func(*Provider) error

// WithMaxFileBytes sets the size limit of one file; n must be positive. The
// default is manifest.DefaultMaxBytes.
func WithMaxFileBytes(n int64) Option {
	return func(p *Provider) error {
		if n <= 0 {
			return fmt.Errorf("file provider: file size limit %d is not positive", n)
		}
		p.maxBytes = n
		return nil
	}
}

// WithTracerProvider records the provider's spans with tp instead of the
// global OpenTelemetry tracer provider (see pkg/telemetry).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(p *Provider) error {
		if tp == nil {
			return errors.New("file provider: WithTracerProvider: nil provider")
		}
		p.tracer = tp.Tracer(tracerName)
		return nil
	}
}

// New returns a Provider for the folder dir. It fails when dir is not a
// folder. A nil log discards.
func New(dir string, b *bus.Bus, log *slog.Logger, opts ...Option) (*Provider, error) {
	if b == nil {
		return nil, errors.New("file provider: no bus")
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("file provider: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("file provider: %s is not a folder", dir)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Provider{dir: dir, bus: b, log: log, maxBytes: manifest.DefaultMaxBytes, tracer: otel.Tracer(tracerName)}
	for _, opt := range opts {
		if err := opt(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Ready reports whether the folder has been published once in full.
func (p *Provider) Ready() bool { return p.ready.Load() }

// Problems returns the current problems of the folder's files, by path and
// line: files that do not decode or cannot be read, and objects defined twice.
// The caller owns the returned slice.
func (p *Provider) Problems() []manifest.Problem {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.problems)
}

// Run publishes the folder and follows its changes until ctx is done; it then
// returns nil. Bus errors are retried. Run must not be called twice at once.
func (p *Provider) Run(ctx context.Context) error {
	compiled := make(chan struct{})
	go p.precompile(ctx, compiled)
	defer func() { <-compiled }()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("file provider: watch %s: %w", p.dir, err)
	}
	defer func() { _ = w.Close() }()
	done, err := newCompletions()
	if err != nil {
		p.log.Warn("watch for completed writes; every write is read once the folder is quiet", "path", p.dir, "error", err)
	}
	defer func() { _ = done.close() }()
	r := &runner{
		Provider:    p,
		watcher:     w,
		completions: done,
		folder:      newFolder(p.dir, p.log, p.maxBytes),
		pub:         publisher{bus: p.bus, log: p.log},
		marks:       syncmark.New(p.bus, "file"),
		reported:    map[string]bool{},
		retry:       minRetry,
		changed:     map[string]bool{},
		unsettled:   map[string]bool{},
		completed:   map[string]bool{},
		full:        true,
	}
	defer r.pub.stop()
	return r.loop(ctx)
}

// precompile compiles the API server's checks of every kind (package
// validate) while the folder is read, so that a file of a kind not seen
// before is not delayed by them later. It closes done when it returns.
func (p *Provider) precompile(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	start := time.Now()
	if err := validate.Precompile(ctx); err != nil && ctx.Err() == nil {
		p.log.Error("compile validation", "error", err)
		return
	}
	p.log.Debug("validation compiled", "duration", time.Since(start))
}

// runner is the state of one Run.
type runner struct {
	*Provider
	watcher     *fsnotify.Watcher
	completions *completions // nil when there is none
	folder      *folder
	pub         publisher
	marks       *syncmark.Marker
	// reported holds the conflicts already logged.
	reported map[string]bool
	// retry is the delay before the next retry of a failed sync.
	retry time.Duration
	// changed are the files events named since the last sync; full is set
	// when the folder must be scanned again instead (see note).
	changed map[string]bool
	full    bool
	// unsettled are the changed files that may still be being written:
	// named by an event since the last sync and not known to be whole;
	// completed are the files known to be whole since the last sync.
	unsettled, completed map[string]bool
}

func (r *runner) loop(ctx context.Context) error {
	settle := time.NewTimer(0) // the initial sync
	defer settle.Stop()
	var burst time.Time // when the current burst of events began
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-r.watcher.Events:
			if !ok {
				return fmt.Errorf("file provider: watcher of %s closed", r.dir)
			}
			if !r.note(ev) {
				continue
			}
			now := time.Now()
			if burst.IsZero() {
				burst = now
			}
			if now.Sub(burst) < maxSettleDelay {
				settle.Reset(r.delay())
			}
		case name := <-r.completions.Names():
			if r.complete(name) && r.delay() == completeDelay {
				settle.Reset(completeDelay)
			}
		case err, ok := <-r.watcher.Errors:
			if !ok {
				return fmt.Errorf("file provider: watcher of %s closed", r.dir)
			}
			// Events may have been lost (ErrEventOverflow): scan again.
			r.log.Warn("watch error", "path", r.dir, "error", err)
			r.full = true
			settle.Reset(settleDelay)
		case e, ok := <-r.bucketUpdates():
			switch {
			case !ok: // the watch ended: read the bucket again
				r.pub.stop()
				settle.Reset(r.retry)
			case r.pub.observe(e):
				settle.Reset(settleDelay)
			}
		case <-settle.C:
			burst = time.Time{}
			ok, again := r.sync(ctx)
			switch {
			case !ok:
				settle.Reset(r.retry)
				r.retry = min(2*r.retry, maxRetry)
			case !again.IsZero():
				settle.Reset(max(time.Until(again), settleDelay))
			}
		}
	}
}

// bucketUpdates is the channel of the publisher's watch of the bucket; nil
// (never ready) while there is none.
func (r *runner) bucketUpdates() <-chan *bus.Entry {
	if r.pub.watch == nil {
		return nil
	}
	return r.pub.watch.Updates()
}

// sync scans the folder and publishes it. It reports false when it must be
// retried, and when it must run again to delete what files caught mid-write
// hold (zero when nothing is held, or only by files that do not decode).
func (r *runner) sync(ctx context.Context) (bool, time.Time) {
	if r.pub.records == nil {
		if err := r.pub.load(ctx); err != nil {
			if ctx.Err() == nil {
				r.log.Error("read resources bucket", "error", err)
			}
			return false, time.Time{}
		}
		r.full = true // every key is compared with what the bucket holds
	}
	keys, ok := r.read()
	want, conflicts := r.folder.merge()
	r.report(conflicts)
	if !ok {
		return false, time.Time{}
	}
	now := time.Now()
	var again time.Time
	holds := func(path string) bool {
		held, until := r.folder.holds(path, now)
		if !until.IsZero() && (again.IsZero() || until.Before(again)) {
			again = until
		}
		return held
	}
	marked := false
	if first := !r.ready.Load(); first || r.pub.pending(want, keys) > 1 {
		within := batchSyncWithin
		if first {
			within = initialSyncWithin
		}
		if err := r.marks.Syncing(ctx, within); err != nil {
			r.log.Error("publish resources", "error", err)
			return false, time.Time{}
		}
		marked = true
	}
	puts, deletes, held, err := r.publish(ctx, want, keys, holds)
	if err == nil && marked {
		err = r.marks.Synced(ctx, len(want))
	}
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("publish resources", "error", err)
		}
		r.pub.stop() // read the bucket again, and the folder, before the retry
		r.full = true
		return false, time.Time{}
	}
	if puts+deletes > 0 || held > 0 {
		r.log.Info("resources published", "puts", puts, "deletes", deletes, "held", held, "objects", len(want))
	}
	if !r.ready.Swap(true) {
		r.log.Info("folder published", "path", r.dir, "objects", len(want))
	}
	r.retry = minRetry
	return true, again
}

// publish syncs the bucket in a span, so that the trace context the bus
// writes with every put follows the change to the translator and beyond.
func (r *runner) publish(ctx context.Context, want map[string]manifest.Object, keys map[string]bool, holds func(string) bool) (puts, deletes, held int, err error) {
	ctx, span := r.tracer.Start(ctx, "provider.file.publish", trace.WithAttributes(
		attribute.String("gatewire.provider.dir", r.dir), attribute.Int("gatewire.objects", len(want))))
	defer span.End()
	puts, deletes, held, err = r.pub.sync(ctx, want, keys, holds)
	span.SetAttributes(attribute.Int("gatewire.puts", puts), attribute.Int("gatewire.deletes", deletes),
		attribute.Int("gatewire.held", held))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "publish failed")
	}
	return puts, deletes, held, err
}

// report logs the conflicts not logged yet and updates Problems.
func (r *runner) report(conflicts []manifest.Problem) {
	now := map[string]bool{}
	for _, c := range conflicts {
		msg := c.Error()
		now[msg] = true
		if !r.reported[msg] {
			r.log.Error("object defined twice", "path", c.Path, "line", c.Line, "error", c.Message)
		}
	}
	r.reported = now
	all := append(r.folder.problems(), conflicts...)
	slices.SortStableFunc(all, func(a, b manifest.Problem) int {
		if a.Path != b.Path {
			return cmp.Compare(a.Path, b.Path)
		}
		return a.Line - b.Line
	})
	r.mu.Lock()
	r.problems = all
	r.mu.Unlock()
}
