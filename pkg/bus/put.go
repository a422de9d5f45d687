package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// casAttempts bounds the compare-and-set loop of a source-revision write.
const casAttempts = 16

// PutOption changes how a value is written.
type PutOption func(*putOptions)

type putOptions struct {
	source      uint64
	hasSource   bool
	revision    uint64
	hasRevision bool
	headers     []header // in the order given; a later one of a name wins
	marshalled  []byte
}

// header is one header of the writer's own.
type header struct{ name, value string }

// WithSourceRevision stamps an output with the revision of the resources it
// was computed from. The write is refused with [ErrStale] when the stored
// value (or deletion) carries a newer source revision.
func WithSourceRevision(rev uint64) PutOption {
	return func(o *putOptions) { o.source, o.hasSource = rev, true }
}

// WithRevision makes the write a compare-and-set on the key's KV revision:
// it fails with [ErrConflict] unless the key's last revision is rev (0: the
// key has never been written).
func WithRevision(rev uint64) PutOption {
	return func(o *putOptions) { o.revision, o.hasRevision = rev, true }
}

// WithHeader adds a header of the writer's own to the message, for example
// a digest of the value or the writer's name; readers find it in
// [Entry.Header], also on a [HeadersOnly] watch. Headers the bus sets
// itself, and names that start with "Nats-" or "KV-", are left alone.
func WithHeader(name, value string) PutOption {
	return func(o *putOptions) { o.headers = append(o.headers, header{name, value}) }
}

// WithMarshalled gives Put the value already marshalled, deterministically
// (proto.MarshalOptions{Deterministic: true}), so that it is not marshalled
// again: a writer that hashed those bytes saves a pass over a large value.
// data must be msg's encoding.
func WithMarshalled(data []byte) PutOption {
	return func(o *putOptions) { o.marshalled = data }
}

// addHeaders copies the writer's headers into h, except those it must not
// change.
func (o *putOptions) addHeaders(h nats.Header) {
	for _, hd := range o.headers {
		if !reservedHeader(hd.name) {
			h.Set(hd.name, hd.value)
		}
	}
}

// reservedHeaders are the headers the bus sets itself.
var reservedHeaders = []string{HeaderType, HeaderSourceRevision, HeaderEncoding, HeaderObject, "traceparent", "tracestate"}

func reservedHeader(name string) bool {
	for _, r := range reservedHeaders {
		if strings.EqualFold(name, r) {
			return true
		}
	}
	lower := strings.ToLower(name)
	return strings.HasPrefix(lower, "nats-") || strings.HasPrefix(lower, "kv-")
}

// last is the newest message of a key, live or deleted.
type last struct {
	revision uint64
	source   uint64
	deleted  bool
	object   string
}

func (b *Bus) last(ctx context.Context, bucket Bucket, key string) (*last, error) {
	m, err := b.streams[bucket].GetLastMsgForSubject(ctx, b.subject(bucket, key))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return &last{deleted: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bus: read %s/%s: %w", b.BucketName(bucket), key, err)
	}
	return &last{
		revision: m.Sequence,
		source:   sourceRevision(m.Header),
		deleted:  isDeletion(m.Header),
		object:   m.Header.Get(HeaderObject),
	}, nil
}

// Put writes msg under key and returns the new KV revision.
func (b *Bus) Put(ctx context.Context, bucket Bucket, key string, msg proto.Message, opts ...PutOption) (uint64, error) {
	var o putOptions
	for _, opt := range opts {
		opt(&o)
	}
	data, h, err := b.encode(ctx, msg, o.marshalled)
	if err != nil {
		return 0, err
	}
	return b.write(ctx, bucket, key, data, h, opts)
}

// Delete removes key. Deleting a missing key is not an error. With
// [WithSourceRevision] the deletion is refused with [ErrStale] when the
// stored value is newer.
func (b *Bus) Delete(ctx context.Context, bucket Bucket, key string, opts ...PutOption) error {
	h := nats.Header{}
	h.Set(headerOperation, "DEL")
	propagator.Inject(ctx, headerCarrier(h))
	_, err := b.write(ctx, bucket, key, nil, h, opts)
	return err
}

func (b *Bus) write(ctx context.Context, bucket Bucket, key string, data []byte, h nats.Header, opts []PutOption) (uint64, error) {
	if _, err := b.bucket(bucket); err != nil {
		return 0, err
	}
	rev, err := b.writeCAS(ctx, bucket, key, data, h, opts)
	// A refusal as stale or a lost compare-and-set is the protocol at
	// work, not a failure.
	if !errors.Is(err, ErrStale) && !errors.Is(err, ErrConflict) {
		instruments().wrote(ctx, bucket, opName(h), err)
	}
	return rev, err
}

func opName(h nats.Header) string {
	if isDeletion(h) {
		return "delete"
	}
	return "put"
}

func (b *Bus) writeCAS(ctx context.Context, bucket Bucket, key string, data []byte, h nats.Header, opts []PutOption) (uint64, error) {
	var o putOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.hasSource {
		h.Set(HeaderSourceRevision, strconv.FormatUint(o.source, 10))
	}
	o.addHeaders(h)
	for attempt := 0; attempt < casAttempts; attempt++ {
		m := &nats.Msg{Subject: b.subject(bucket, key), Header: h, Data: data}
		var prev *last
		switch {
		case o.hasRevision:
			m.Header.Set(headerExpectedSeq, strconv.FormatUint(o.revision, 10))
		case o.hasSource:
			var err error
			if prev, err = b.last(ctx, bucket, key); err != nil {
				return 0, err
			}
			if prev.source > o.source {
				return 0, fmt.Errorf("%w: %s/%s has source revision %d, this write %d", ErrStale, b.BucketName(bucket), key, prev.source, o.source)
			}
			m.Header.Set(headerExpectedSeq, strconv.FormatUint(prev.revision, 10))
		}
		ack, err := b.js.PublishMsg(ctx, m)
		if isWrongSequence(err) {
			if o.hasRevision {
				return 0, fmt.Errorf("%w: %s/%s is not at revision %d", ErrConflict, b.BucketName(bucket), key, o.revision)
			}
			continue
		}
		if isFull(err) {
			return 0, b.refused(ctx, bucket, key, opName(h), err)
		}
		if err != nil {
			return 0, fmt.Errorf("bus: write %s/%s: %w", b.BucketName(bucket), key, err)
		}
		if prev != nil && prev.object != "" && prev.object != h.Get(HeaderObject) {
			// The old large value is no longer referenced by this key.
			_ = b.objects.Delete(ctx, prev.object)
		}
		return ack.Sequence, nil
	}
	return 0, fmt.Errorf("%w: %s/%s changed %d times while writing", ErrConflict, b.BucketName(bucket), key, casAttempts)
}

func isWrongSequence(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// Get reads the value of key. It fails with [ErrNotFound] when the key has
// no value.
func (b *Bus) Get(ctx context.Context, bucket Bucket, key string) (*Entry, error) {
	if _, err := b.bucket(bucket); err != nil {
		return nil, err
	}
	m, err := b.streams[bucket].GetLastMsgForSubject(ctx, b.subject(bucket, key))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("%w: %s/%s", ErrNotFound, b.BucketName(bucket), key)
	}
	if err != nil {
		return nil, fmt.Errorf("bus: read %s/%s: %w", b.BucketName(bucket), key, err)
	}
	e := b.entry(ctx, bucket, key, m.Sequence, m.Header, m.Data)
	if e.Op == OpDelete {
		return nil, fmt.Errorf("%w: %s/%s", ErrNotFound, b.BucketName(bucket), key)
	}
	return e, e.Err
}

// Keys lists the keys of bucket that match pattern (NATS wildcards; ">" for
// all), in no particular order.
func (b *Bus) Keys(ctx context.Context, bucket Bucket, pattern string) ([]string, error) {
	kv, err := b.bucket(bucket)
	if err != nil {
		return nil, err
	}
	lister, err := kv.ListKeysFiltered(ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("bus: keys of %s: %w", b.BucketName(bucket), err)
	}
	defer func() { _ = lister.Stop() }()
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	return keys, nil
}
