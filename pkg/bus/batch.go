package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// batchWindow bounds the writes of a Batch that are sent and not yet
// acknowledged.
const batchWindow = 512

// Batch writes many keys of one bucket without waiting for each write's
// acknowledgement: it sends them, at most a window at a time, and [Batch.Wait]
// waits for the rest. The server applies them in the order they were sent.
// A batch never reads the bucket: [WithRevision] is checked by the server,
// and [WithSourceRevision] only stamps the header (there is no
// compare-and-set on it; write the value that must not go backwards, such
// as a commit, with [Bus.Put] after the batch). A Batch is not safe for
// concurrent use.
type Batch struct {
	b       *Bus
	bucket  Bucket
	pending []pendingWrite
	err     error
	// Revisions is, after Wait, the KV revision of each key written.
	Revisions map[string]uint64
}

type pendingWrite struct {
	key string
	ack jetstream.PubAckFuture
}

// Batch starts a batch of writes to bucket.
func (b *Bus) Batch(bucket Bucket) *Batch {
	return &Batch{b: b, bucket: bucket, Revisions: map[string]uint64{}}
}

// Put sends msg under key. Errors are kept for Wait.
func (x *Batch) Put(ctx context.Context, key string, msg proto.Message, opts ...PutOption) {
	if x.err != nil {
		return
	}
	data, h, err := x.b.encode(ctx, msg, nil)
	if err != nil {
		x.err = err
		return
	}
	x.send(ctx, key, data, h, opts, nil)
}

// Purge removes key and every older value of it. With ttl > 0 the marker
// it leaves is itself removed after ttl (the bucket must allow message
// TTLs, as the xds bucket does), so keys that come and go leave nothing
// behind; a reader away for longer than ttl does not learn of the removal
// and must read the bucket again.
func (x *Batch) Purge(ctx context.Context, key string, ttl time.Duration, opts ...PutOption) {
	if x.err != nil {
		return
	}
	h := nats.Header{}
	h.Set(headerOperation, "PURGE")
	h.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	propagator.Inject(ctx, headerCarrier(h))
	var pub []jetstream.PublishOpt
	if ttl > 0 {
		pub = append(pub, jetstream.WithMsgTTL(ttl))
	}
	x.send(ctx, key, nil, h, opts, pub)
}

func (x *Batch) send(ctx context.Context, key string, data []byte, h nats.Header, opts []PutOption, pub []jetstream.PublishOpt) {
	if _, err := x.b.bucket(x.bucket); err != nil {
		x.err = err
		return
	}
	var o putOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.hasSource {
		h.Set(HeaderSourceRevision, strconv.FormatUint(o.source, 10))
	}
	if o.hasRevision {
		h.Set(headerExpectedSeq, strconv.FormatUint(o.revision, 10))
	}
	o.addHeaders(h)
	if len(x.pending) >= batchWindow {
		x.settle(ctx, len(x.pending)/2)
		if x.err != nil {
			return
		}
	}
	ack, err := x.b.js.PublishMsgAsync(&nats.Msg{Subject: x.b.subject(x.bucket, key), Header: h, Data: data}, pub...)
	if err != nil {
		x.err = fmt.Errorf("bus: write %s/%s: %w", x.b.BucketName(x.bucket), key, err)
		return
	}
	x.pending = append(x.pending, pendingWrite{key: key, ack: ack})
}

// settle waits for the acknowledgements of the first n pending writes.
func (x *Batch) settle(ctx context.Context, n int) {
	for _, p := range x.pending[:n] {
		select {
		case a := <-p.ack.Ok():
			x.Revisions[p.key] = a.Sequence
		case err := <-p.ack.Err():
			if x.err == nil {
				x.err = x.b.batchError(ctx, x.bucket, p.key, err)
			}
		case <-ctx.Done():
			if x.err == nil {
				x.err = fmt.Errorf("bus: write %s/%s: %w", x.b.BucketName(x.bucket), p.key, ctx.Err())
			}
			return
		}
	}
	x.pending = append(x.pending[:0], x.pending[n:]...)
}

// Wait waits for every write sent and returns the first error: a write
// that failed, or was refused (a WithRevision that did not hold is
// ErrConflict). Writes after a failed one may have been applied.
func (x *Batch) Wait(ctx context.Context) error {
	x.settle(ctx, len(x.pending))
	x.pending = nil
	return x.err
}

// Len is the number of writes sent and not yet waited for.
func (x *Batch) Len() int { return len(x.pending) }

func (b *Bus) batchError(ctx context.Context, bucket Bucket, key string, err error) error {
	if isFull(err) {
		return b.refused(ctx, bucket, key, "put", err)
	}
	if isWrongSequence(err) {
		return fmt.Errorf("%w: %s/%s moved on", ErrConflict, b.BucketName(bucket), key)
	}
	if errors.Is(err, jetstream.ErrNoStreamResponse) {
		return fmt.Errorf("bus: write %s/%s: no answer from JetStream: %w", b.BucketName(bucket), key, err)
	}
	return fmt.Errorf("bus: write %s/%s: %w", b.BucketName(bucket), key, err)
}
