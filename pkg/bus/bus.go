package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket names one of the buckets of DESIGN.md section 2, without the
// installation prefix.
type Bucket string

// The buckets.
const (
	Resources Bucket = "resources"
	Status    Bucket = "status"
	IR        Bucket = "ir"
	XDS       Bucket = "xds"
	Infra     Bucket = "infra"
	Members   Bucket = "members"
)

// Buckets lists every bucket, in data-flow order.
var Buckets = []Bucket{Resources, Status, IR, XDS, Infra, Members, Proxies}

// Objects names the object store of values too large for one message
// (<system>-objects) where an option takes buckets; it is not in Buckets.
const Objects Bucket = "objects"

// Errors returned by the bus. They work with errors.Is.
var (
	// ErrNotFound: the key has no value (never written, or deleted).
	ErrNotFound = errors.New("bus: key not found")
	// ErrStale: the write was refused because the stored value was computed
	// from a newer source revision. Do not retry it: a newer result is there.
	ErrStale = errors.New("bus: stored value is newer")
	// ErrConflict: a compare-and-set on the KV revision lost.
	ErrConflict = errors.New("bus: revision conflict")
)

// MarkerTTL is how long the marker of a purged resource key of the xds
// bucket stays: long enough for any reader that is away (a NATS restart,
// a partition) to learn of the removal when it comes back.
const MarkerTTL = 24 * time.Hour

// Bus reads and writes gatewire's buckets over one NATS connection.
type Bus struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	o       options
	kv      map[Bucket]jetstream.KeyValue
	streams map[Bucket]jetstream.Stream
	objects jetstream.ObjectStore
}

type options struct {
	system    string
	storage   jetstream.StorageType
	replicas  int
	memberTTL time.Duration
	openOnly  bool
	create    map[Bucket]bool // nil: every bucket

	proxiesTTL time.Duration
	maxValue   int64
	maxBytes   int64
	log        *slog.Logger
}

// Option configures a Bus.
type Option func(*options) error

// WithSystem sets the installation name that prefixes every bucket
// (default "gatewire").
func WithSystem(name string) Option {
	return func(o *options) error {
		if name == "" || !validToken(name) {
			return fmt.Errorf("bus: system name %q: want letters, digits, '-' or '_'", name)
		}
		o.system = name
		return nil
	}
}

// WithReplicas sets how many copies of each bucket a NATS cluster keeps
// (default 1; 3 in production).
func WithReplicas(n int) Option {
	return func(o *options) error {
		if n < 1 || n > 5 {
			return fmt.Errorf("bus: replicas %d: want 1 to 5", n)
		}
		o.replicas = n
		return nil
	}
}

// WithOpenOnly opens existing buckets and never creates or changes them,
// for tools such as taps that must not alter an installation's settings
// (its replica count, for one).
func WithOpenOnly() Option {
	return func(o *options) error { o.openOnly = true; return nil }
}

// WithCreate makes New create (or update) only these buckets, Objects for
// the object store, and open the others without changing them, failing
// while one is missing: for a user that may create only the buckets it
// owns (package natsauth). The buckets it creates come first, so services
// that wait for each other's buckets make progress.
func WithCreate(buckets ...Bucket) Option {
	return func(o *options) error {
		o.create = map[Bucket]bool{}
		for _, b := range buckets {
			if b != Objects && !slices.Contains(Buckets, b) {
				return fmt.Errorf("bus: WithCreate: unknown bucket %q", b)
			}
			o.create[b] = true
		}
		return nil
	}
}

// creates reports whether New creates bucket.
func (o *options) creates(bucket Bucket) bool {
	return !o.openOnly && (o.create == nil || o.create[bucket])
}

// createdFirst orders the buckets so that those New creates come first.
func (o *options) createdFirst() []Bucket {
	out := slices.Clone(Buckets)
	slices.SortStableFunc(out, func(a, b Bucket) int {
		switch ca, cb := o.creates(a), o.creates(b); {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return 0
	})
	return out
}

// WithLogger sets the logger of the bus's own reports: values that do not
// decode and writes refused for lack of room (default slog.Default()).
func WithLogger(log *slog.Logger) Option {
	return func(o *options) error {
		if log != nil {
			o.log = log
		}
		return nil
	}
}

// WithMemoryStorage keeps buckets in memory instead of on disk (tests).
func WithMemoryStorage() Option {
	return func(o *options) error { o.storage = jetstream.MemoryStorage; return nil }
}

// WithMemberTTL sets how long a replica's heartbeat lives in the members
// bucket (default 5s). When a heartbeat ages out, the server writes a
// deletion marker in its place, which watchers receive as an [OpDelete]
// entry; without it, an expired key would vanish without a word to
// watchers. The server checks ages on a timer, so the marker can come a
// second or so after the TTL: readers that need a tight bound keep their
// own clock of the last heartbeat seen.
func WithMemberTTL(d time.Duration) Option {
	return func(o *options) error {
		if d < time.Second {
			return fmt.Errorf("bus: member ttl %s: want at least 1s", d)
		}
		o.memberTTL = d
		return nil
	}
}

func validToken(s string) bool {
	for _, r := range s {
		ok := r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// New opens the buckets over nc, creating them when missing. It is
// idempotent: many services may call it at once. The caller keeps ownership
// of nc.
func New(ctx context.Context, nc *nats.Conn, opts ...Option) (*Bus, error) {
	o := options{system: "gatewire", storage: jetstream.FileStorage, replicas: 1, memberTTL: 5 * time.Second, proxiesTTL: defaultProxiesTTL,
		maxValue: DefaultMaxValueBytes, log: slog.Default()}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	b := &Bus{nc: nc, js: js, o: o, kv: map[Bucket]jetstream.KeyValue{}, streams: map[Bucket]jetstream.Stream{}}
	if o.creates(Objects) {
		if err := b.openObjects(ctx); err != nil {
			return nil, err
		}
	}
	for _, bucket := range o.createdFirst() {
		cfg := jetstream.KeyValueConfig{
			Bucket:      b.BucketName(bucket),
			Description: "gatewire " + string(bucket),
			History:     1,
			Storage:     o.storage,
			Replicas:    o.replicas,
			MaxBytes:    o.bucketMaxBytes(bucket),
		}
		if ttl := o.ttl(bucket); ttl > 0 {
			cfg.TTL = ttl
			cfg.LimitMarkerTTL = ttl
		}
		if bucket == XDS {
			// Resource keys are purged with a TTL on the marker
			// (Batch.Purge), which needs message TTLs.
			cfg.LimitMarkerTTL = MarkerTTL
		}
		var kv jetstream.KeyValue
		if !o.creates(bucket) {
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		} else {
			kv, err = js.CreateOrUpdateKeyValue(ctx, cfg)
		}
		if err != nil {
			return nil, fmt.Errorf("bus: bucket %s: %w", cfg.Bucket, err)
		}
		b.kv[bucket] = kv
		// The stream handle reads single messages (Get, and the last value
		// before a compare-and-set) without asking for the stream's info
		// every time.
		if b.streams[bucket], err = js.Stream(ctx, b.stream(bucket)); err != nil {
			return nil, fmt.Errorf("bus: stream of %s: %w", cfg.Bucket, err)
		}
	}
	if b.objects == nil {
		if err := b.openObjects(ctx); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// openObjects creates or opens the object store.
func (b *Bus) openObjects(ctx context.Context) (err error) {
	objects := jetstream.ObjectStoreConfig{
		Bucket:      b.o.system + "-objects",
		Description: "gatewire values too large for one message",
		Storage:     b.o.storage,
		Replicas:    b.o.replicas,
		MaxBytes:    b.o.bucketMaxBytes(Objects),
	}
	if !b.o.creates(Objects) {
		b.objects, err = b.js.ObjectStore(ctx, objects.Bucket)
	} else {
		b.objects, err = b.js.CreateOrUpdateObjectStore(ctx, objects)
	}
	if err != nil {
		return fmt.Errorf("bus: object store %s-objects: %w", b.o.system, err)
	}
	return nil
}

// Conn is the bus's NATS connection.
func (b *Bus) Conn() *nats.Conn { return b.nc }

// System is the installation name.
func (b *Bus) System() string { return b.o.system }

// BucketName is the full JetStream name of a bucket: <system>-<bucket>.
func (b *Bus) BucketName(bucket Bucket) string { return b.o.system + "-" + string(bucket) }

func (b *Bus) stream(bucket Bucket) string { return "KV_" + b.BucketName(bucket) }

func (b *Bus) subject(bucket Bucket, key string) string {
	return "$KV." + b.BucketName(bucket) + "." + key
}

func (b *Bus) bucket(bucket Bucket) (jetstream.KeyValue, error) {
	kv, ok := b.kv[bucket]
	if !ok {
		return nil, fmt.Errorf("bus: unknown bucket %q", bucket)
	}
	return kv, nil
}
