package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrFull: the server refused a write because the bucket reached its
// share of the store ([WithMaxBytes]) or the JetStream store is full. It
// is not retried at once: see the package doc for the recovery.
var ErrFull = errors.New("bus: bucket full")

// MinMaxBytes is the least store budget [WithMaxBytes] accepts.
const MinMaxBytes = 16 << 20

// shares are the parts of the store budget each bucket may use, in
// thousandths; they add up to 950, so a budget equal to the server's
// store leaves a twentieth free for the server's own use.
var shares = map[Bucket]int64{
	Resources: 200,
	Status:    100,
	IR:        150,
	XDS:       250,
	Infra:     50,
	Members:   10,
	Proxies:   40,
	Objects:   150,
}

// WithMaxBytes sets the installation's store budget: each bucket may hold
// its share of it (see [BucketMaxBytes]), which the server reserves when
// the bucket is created, so one bucket filling up never fills the store
// and the others go on. 0, the default, sets no limit per bucket: the
// server's store is shared by all, and when it is full every write is
// refused, deletions too.
func WithMaxBytes(n int64) Option {
	return func(o *options) error {
		if n != 0 && n < MinMaxBytes {
			return fmt.Errorf("bus: max bytes %d: want 0 (no limits) or at least %d", n, MinMaxBytes)
		}
		o.maxBytes = n
		return nil
	}
}

// BucketMaxBytes is the most a bucket holds under the store budget total
// (-1, no limit, when total is 0).
func BucketMaxBytes(total int64, bucket Bucket) int64 {
	if total == 0 {
		return -1
	}
	return total / 1000 * shares[bucket]
}

func (o *options) bucketMaxBytes(bucket Bucket) int64 { return BucketMaxBytes(o.maxBytes, bucket) }

// isFull reports whether err is the server refusing a message for lack of
// room: the stream's MaxBytes (10077 "maximum bytes exceeded"), or the
// account's or server's store (10023, 10047).
func isFull(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode {
	case 10023, 10047: // insufficient resources, storage resources exceeded
		return true
	case 10077: // store failed: "maximum bytes exceeded", "maximum messages exceeded"
		d := strings.ToLower(apiErr.Description)
		return strings.Contains(d, "maximum bytes") || strings.Contains(d, "maximum messages") || strings.Contains(d, "resources")
	}
	return false
}

// refused reports a write the server refused for lack of room.
func (b *Bus) refused(ctx context.Context, bucket Bucket, key, op string, err error) error {
	instruments().refusedWrite(ctx, bucket, op)
	b.o.log.Error("bus write refused: bucket full; see the README, Recovering from a full store",
		"bucket", b.BucketName(bucket), "key", key, "op", op, "max_bytes", b.o.bucketMaxBytes(bucket), "error", err)
	return fmt.Errorf("%w: %s/%s: %w", ErrFull, b.BucketName(bucket), key, err)
}
