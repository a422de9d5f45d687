package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// Op is what happened to a key.
type Op int

// The operations.
const (
	OpPut Op = iota
	OpDelete
)

func (o Op) String() string {
	if o == OpDelete {
		return "delete"
	}
	return "put"
}

// Entry is one value of one key. Entries are owned by the receiver.
type Entry struct {
	Bucket Bucket
	Key    string
	// Revision is the KV revision: the sequence of the bucket's stream,
	// increasing with every write to any key of the bucket.
	Revision uint64
	Op       Op
	// Value is the decoded value; nil for OpDelete, on a [HeadersOnly]
	// watch, or when Err is set.
	Value proto.Message
	// SourceRevision is the resources revision an output was computed from.
	SourceRevision uint64
	Header         nats.Header
	// Err is set when the value could not be decoded (it wraps
	// [ErrBadValue], and [ErrTooLarge] past the limit); the entry is still
	// delivered so that the reader can report it.
	Err error
}

// Context returns parent carrying the trace context of the entry's writer
// and the publication time of its change ([HeaderPublished]), if any.
func (e *Entry) Context(parent context.Context) context.Context {
	if e == nil || e.Header == nil {
		return parent
	}
	ctx := propagator.Extract(parent, headerCarrier(e.Header))
	if t, ok := e.Published(); ok {
		ctx = ContextWithPublished(ctx, t)
	}
	return ctx
}

func (b *Bus) entry(ctx context.Context, bucket Bucket, key string, rev uint64, h nats.Header, data []byte) *Entry {
	e := &Entry{Bucket: bucket, Key: key, Revision: rev, Header: h, SourceRevision: sourceRevision(h)}
	if isDeletion(h) {
		e.Op = OpDelete
		return e
	}
	if e.Value, e.Err = b.decode(ctx, h, data); e.Err != nil {
		e.Err = fmt.Errorf("%w: %s/%s at revision %d: %w", ErrBadValue, b.BucketName(bucket), key, rev, e.Err)
		instruments().badValue(ctx, bucket)
		b.o.log.Warn("bus value does not decode", "bucket", b.BucketName(bucket), "key", key, "revision", rev, "error", e.Err)
	}
	return e
}

// headersEntry is an entry of a headers-only watch: no value to decode.
func headersEntry(bucket Bucket, key string, rev uint64, h nats.Header) *Entry {
	e := &Entry{Bucket: bucket, Key: key, Revision: rev, Header: h, SourceRevision: sourceRevision(h)}
	if isDeletion(h) {
		e.Op = OpDelete
	}
	return e
}

// isDeletion reports whether a message of a bucket's stream removes its key:
// a delete or purge, or the marker the server leaves when the key's value
// ages out of a bucket with a TTL (see [WithMemberTTL]).
func isDeletion(h nats.Header) bool {
	switch h.Get(headerOperation) {
	case "DEL", "PURGE":
		return true
	}
	return h.Get(headerMarkerReason) != ""
}

// Watcher follows the keys of a bucket. See [Bus.Watch].
type Watcher struct {
	updates chan *Entry
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
	// synced is the revision of the initial sync; see SyncedRevision.
	synced atomic.Uint64
	stats  *watchStats
}

// WatchOption changes what a watch delivers.
type WatchOption func(*watchOptions)

type watchOptions struct {
	headersOnly bool
}

// HeadersOnly makes a watch deliver entries without their values: Value
// is nil and only the headers are read (the type, the source revision and
// the writer's own headers, see [WithHeader]). Following a bucket of large
// values this way costs little.
func HeadersOnly() WatchOption {
	return func(o *watchOptions) { o.headersOnly = true }
}

// SyncedRevision is the revision of the newest entry the watch read
// during its initial sync, deletions included, which the initial sync does
// not deliver: the state the reader holds once it receives the nil entry
// is that of the bucket at this revision. It is valid once the nil entry
// has been received, and 0 for a bucket that was empty.
func (w *Watcher) SyncedRevision() uint64 { return w.synced.Load() }

// Updates delivers first the latest entry of every matching key (deleted
// keys are left out), then one nil entry that marks the end of that initial
// sync (also when there was nothing), then every change in order. It is
// closed when the watch's context is done or Stop is called.
func (w *Watcher) Updates() <-chan *Entry { return w.updates }

// Stop ends the watch and waits for its goroutine.
func (w *Watcher) Stop() {
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
}

// Watch follows the keys of bucket that match pattern (NATS wildcards, ">"
// for all). The watch survives NATS reconnections: it resumes after the last
// entry it delivered.
func (b *Bus) Watch(ctx context.Context, bucket Bucket, pattern string, opts ...WatchOption) (*Watcher, error) {
	if _, err := b.bucket(bucket); err != nil {
		return nil, err
	}
	var o watchOptions
	for _, opt := range opts {
		opt(&o)
	}
	cons, err := b.js.OrderedConsumer(ctx, b.stream(bucket), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{b.subject(bucket, pattern)},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
		HeadersOnly:    o.headersOnly,
	})
	if err != nil {
		return nil, fmt.Errorf("bus: watch %s %s: %w", b.BucketName(bucket), pattern, err)
	}
	iter, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("bus: watch %s %s: %w", b.BucketName(bucket), pattern, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{updates: make(chan *Entry, 64), cancel: cancel, done: make(chan struct{})}
	w.stats = watches.add(bucket, w.updates)
	pending := cons.CachedInfo().NumPending
	go func() {
		<-ctx.Done()
		iter.Stop()
	}()
	go b.follow(ctx, w, bucket, iter, pending, o)
	return w, nil
}

func (b *Bus) follow(ctx context.Context, w *Watcher, bucket Bucket, iter jetstream.MessagesContext, pending uint64, o watchOptions) {
	defer close(w.done)
	defer close(w.updates)
	defer watches.remove(w.stats)
	prefix := b.subject(bucket, "")
	synced := false
	send := func(e *Entry) bool {
		select {
		case w.updates <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if pending == 0 {
		synced = true
		if !send(nil) {
			return
		}
	}
	for {
		m, err := iter.Next()
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) || ctx.Err() != nil {
				return
			}
			// The ordered consumer recreates itself; do not spin meanwhile.
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			continue
		}
		meta, err := m.Metadata()
		if err != nil {
			continue
		}
		w.stats.observe(meta.Timestamp, meta.NumPending)
		key := strings.TrimPrefix(m.Subject(), prefix)
		var e *Entry
		if o.headersOnly {
			e = headersEntry(bucket, key, meta.Sequence.Stream, m.Headers())
		} else {
			e = b.entry(ctx, bucket, key, meta.Sequence.Stream, m.Headers(), m.Data())
		}
		if synced || e.Op != OpDelete {
			if !send(e) {
				return
			}
		}
		if !synced {
			w.synced.Store(max(w.synced.Load(), e.Revision))
		}
		if !synced && meta.NumPending == 0 {
			synced = true
			if !send(nil) {
				return
			}
		}
	}
}
