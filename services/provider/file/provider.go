// Package file is the file mode of the provider: it publishes the Kubernetes
// objects of a folder of manifests to the resources bucket, and keeps the
// bucket equal to the folder as files are added, edited, renamed and removed.
//
// # What is read
//
// Every file ending in .yaml, .yml or .json under the folder and its
// subfolders, except names starting with "." (editor swap files; the hidden
// "..data" folder of a Kubernetes ConfigMap volume, whose files are read
// through the links beside it). Each file is decoded by package manifest:
// multi-document YAML of the kinds manifest.Kinds lists, strictly checked,
// and checked as the Kubernetes API server would check it on create (package
// validate, whose schemas Run compiles in the background from the start).
//
// # What is published
//
// One busv1.Resource per object under bus.ResourceKey(kind, namespace, name),
// with origin "file:<path>:<line>" (the path as the folder was given, joined
// with the file's place in it; the line where the object's document starts).
// Objects are normalized as manifest.Decode describes: files carry no uid, so
// the uid is derived from kind, namespace and name, and creationTimestamp is
// the Unix epoch unless the file sets it. generation starts at 1 and goes up
// by one each time the object outside metadata changes (the way Kubernetes
// counts for custom resources); resourceVersion is a hash of the object and
// its generation. Both are read back from the bucket on start, so an
// unchanged folder rewrites nothing and generations survive restarts.
//
// Only objects that changed are written; objects that disappear from a file,
// or whose file is removed, are deleted. When two documents define the same
// object, the first by path (byte-wise order of the full path; then document
// order) wins, and the other is logged and listed by Problems, naming both.
//
// # Problems
//
// A file that cannot be read or decoded keeps its last good content on the
// bus (nothing if it never had any), and nothing else is disturbed. Each
// problem is logged once per content of the file, at level error with the
// keys path, line and error, and listed by Problems until the file is fixed.
// A folder that cannot be read at all (a volume briefly away) changes nothing
// on the bus; the provider retries until it is back.
//
// # Resync and timing
//
// On start, and after any bus error, the provider reads the resources bucket
// and deletes the keys whose origin starts with "file:" that the folder does
// not hold; keys of other origins (the Kubernetes mode sharing the bucket)
// are never deleted, but a file object with the same key overwrites them. One
// file provider per installation: two would delete each other's keys.
// File system events are gathered for 50ms after the last one (at most 250ms
// in all) and then the whole folder is scanned again, which handles editors
// that write in bursts, rename into place or delete and recreate, and
// ConfigMap volumes that swap a link: a change reaches the bus well within a
// second. Files whose content did not change are not decoded again.
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
	"github.com/gatewire/gatewire/services/provider/manifest"
	"github.com/gatewire/gatewire/services/provider/syncmark"
	"github.com/gatewire/gatewire/services/provider/validate"
)

// tracer is the provider's tracer, from the global TracerProvider.
var tracer = otel.Tracer("github.com/gatewire/gatewire/services/provider/file")

const (
	// settleDelay is how long the folder must be quiet before it is scanned.
	settleDelay = 50 * time.Millisecond
	// maxSettleDelay bounds the wait for a quiet folder during a long burst.
	maxSettleDelay = 250 * time.Millisecond
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

	ready    atomic.Bool
	mu       sync.Mutex
	problems []manifest.Problem
}

// New returns a Provider for the folder dir. It fails when dir is not a
// folder. A nil log discards.
func New(dir string, b *bus.Bus, log *slog.Logger) (*Provider, error) {
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
	return &Provider{dir: dir, bus: b, log: log}, nil
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
	r := &runner{
		Provider: p,
		watcher:  w,
		folder:   newFolder(p.dir, p.log),
		pub:      publisher{bus: p.bus, log: p.log},
		marks:    syncmark.New(p.bus, "file"),
		reported: map[string]bool{},
		retry:    minRetry,
	}
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
	watcher *fsnotify.Watcher
	folder  *folder
	pub     publisher
	marks   *syncmark.Marker
	// reported holds the conflicts already logged.
	reported map[string]bool
	// retry is the delay before the next retry of a failed sync.
	retry time.Duration
}

func (r *runner) loop(ctx context.Context) error {
	settle := time.NewTimer(0) // the initial sync
	defer settle.Stop()
	var burst time.Time // when the current burst of events began
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-r.watcher.Events:
			if !ok {
				return fmt.Errorf("file provider: watcher of %s closed", r.dir)
			}
			now := time.Now()
			if burst.IsZero() {
				burst = now
			}
			if now.Sub(burst) < maxSettleDelay {
				settle.Reset(settleDelay)
			}
		case err, ok := <-r.watcher.Errors:
			if !ok {
				return fmt.Errorf("file provider: watcher of %s closed", r.dir)
			}
			// Events may have been lost (ErrEventOverflow): scan again.
			r.log.Warn("watch error", "path", r.dir, "error", err)
			settle.Reset(settleDelay)
		case <-settle.C:
			burst = time.Time{}
			if !r.sync(ctx) {
				settle.Reset(r.retry)
				r.retry = min(2*r.retry, maxRetry)
			}
		}
	}
}

// sync scans the folder and publishes it. It reports false when it must be
// retried.
func (r *runner) sync(ctx context.Context) bool {
	if r.pub.records == nil {
		if err := r.pub.load(ctx); err != nil {
			if ctx.Err() == nil {
				r.log.Error("read resources bucket", "error", err)
			}
			return false
		}
	}
	scanned := r.folder.scan(r.watcher.Add)
	want, conflicts := r.folder.merge()
	r.report(conflicts)
	if !scanned {
		return false
	}
	marked := false
	if first := !r.ready.Load(); first || r.pub.pending(want) > 1 {
		within := batchSyncWithin
		if first {
			within = initialSyncWithin
		}
		if err := r.marks.Syncing(ctx, within); err != nil {
			r.log.Error("publish resources", "error", err)
			return false
		}
		marked = true
	}
	puts, deletes, err := r.publish(ctx, want)
	if err == nil && marked {
		err = r.marks.Synced(ctx, len(want))
	}
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("publish resources", "error", err)
		}
		r.pub.records = nil // read the bucket again before the retry
		return false
	}
	if puts+deletes > 0 {
		r.log.Info("resources published", "puts", puts, "deletes", deletes, "objects", len(want))
	}
	if !r.ready.Swap(true) {
		r.log.Info("folder published", "path", r.dir, "objects", len(want))
	}
	r.retry = minRetry
	return true
}

// publish syncs the bucket in a span, so that the trace context the bus
// writes with every put follows the change to the translator and beyond.
func (r *runner) publish(ctx context.Context, want map[string]manifest.Object) (puts, deletes int, err error) {
	ctx, span := tracer.Start(ctx, "provider.file.publish", trace.WithAttributes(
		attribute.String("gatewire.provider.dir", r.dir), attribute.Int("gatewire.objects", len(want))))
	defer span.End()
	puts, deletes, err = r.pub.sync(ctx, want)
	span.SetAttributes(attribute.Int("gatewire.puts", puts), attribute.Int("gatewire.deletes", deletes))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "publish failed")
	}
	return puts, deletes, err
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
