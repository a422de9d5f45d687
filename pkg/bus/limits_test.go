package bus_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// bomb is a zstd frame of little bytes that expands to size zeros, with
// no declared content size (a streaming frame), so that only decoding
// tells how large it is.
func bomb(t testing.TB, size int) []byte {
	t.Helper()
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for n := 0; n < size; n += len(zeros) {
		if _, err := enc.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// putRaw writes data under key of the resources bucket as another writer
// would, with headers h.
func putRaw(t testing.TB, b *bus.Bus, key string, h nats.Header, data []byte) {
	t.Helper()
	m := &nats.Msg{Subject: "$KV." + b.BucketName(bus.Resources) + "." + key, Header: h, Data: data}
	if err := b.Conn().PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	if err := b.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestDecompressionBombIsRefused: a value marked zstd that expands to
// 1 GiB is refused as too large after at most the limit, and reading it
// allocates about the limit, not the gigabyte.
func TestDecompressionBombIsRefused(t *testing.T) {
	b := bustest.New(t, bus.WithMaxValueBytes(bus.MinValueBytes*4))
	key := bus.ResourceKey("HTTPRoute", "default", "bomb")
	h := nats.Header{}
	h.Set(bus.HeaderType, "gatewire.bus.v1.Resource")
	h.Set(bus.HeaderEncoding, "zstd")
	putRaw(t, b, key, h, bomb(t, 1<<30))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := totalAlloc()
	_, err := b.Get(ctx, bus.Resources, key)
	grew := totalAlloc() - before
	if !errors.Is(err, bus.ErrTooLarge) || !errors.Is(err, bus.ErrBadValue) {
		t.Fatalf("Get of a 1 GiB bomb: %v, want ErrTooLarge and ErrBadValue", err)
	}
	if limit := uint64(64 << 20); grew > limit {
		t.Fatalf("reading the bomb allocated %d MiB, want at most %d MiB", grew>>20, limit>>20)
	}
	t.Logf("the bomb cost %d KiB of allocations (limit %d MiB)", grew>>10, b.MaxValueBytes()>>20)
}

// TestValueWithinLimitDecodes: a large value that compresses well is
// read back whole, and a writer refuses one past its limit.
func TestValueWithinLimitDecodes(t *testing.T) {
	b := bustest.New(t, bus.WithMaxValueBytes(bus.MinValueBytes*4))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := bus.ResourceKey("HTTPRoute", "default", "big")
	want := &busv1.Resource{Kind: "HTTPRoute", Namespace: "default", Name: "big", Object: bytes.Repeat([]byte("a"), int(b.MaxWriteBytes())-64)}
	if _, err := b.Put(ctx, bus.Resources, key, want); err != nil {
		t.Fatal(err)
	}
	e, err := b.Get(ctx, bus.Resources, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Value.(*busv1.Resource); len(got.GetObject()) != len(want.Object) {
		t.Fatalf("read %d bytes of object, want %d", len(got.GetObject()), len(want.Object))
	}
	want.Object = append(want.Object, make([]byte, 128)...)
	if _, err := b.Put(ctx, bus.Resources, key, want); !errors.Is(err, bus.ErrTooLarge) {
		t.Fatalf("Put past the write limit: %v, want ErrTooLarge", err)
	}
}

// TestFullStoreStillDeletes fills the resources bucket of a server whose
// JetStream store is tiny: new values are refused with ErrFull, but
// deletions and rewrites that do not grow still go through, and the other
// buckets still take values.
func TestFullStoreStillDeletes(t *testing.T) {
	const store = 24 << 20
	s := bustest.ServerWith(t, func(o *server.Options) { o.JetStreamMaxStore = store })
	b := bustest.Open(t, bustest.Connect(t, s), bus.WithMaxBytes(store))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	value := func(i int) *busv1.Resource {
		obj := make([]byte, 100<<10)
		_, _ = rand.Read(obj) // does not compress
		return &busv1.Resource{Kind: "Secret", Namespace: "default", Name: fmt.Sprint(i), Object: obj}
	}
	var written []string
	var err error
	for i := 0; i < 1000; i++ {
		key := bus.ResourceKey("Secret", "default", fmt.Sprint(i))
		if _, err = b.Put(ctx, bus.Resources, key, value(i)); err != nil {
			break
		}
		written = append(written, key)
	}
	if !errors.Is(err, bus.ErrFull) {
		t.Fatalf("after %d values of 100 KiB in a %d MiB store: %v, want ErrFull", len(written), store>>20, err)
	}
	t.Logf("the resources bucket took %d values of 100 KiB", len(written))
	if _, err := b.Put(ctx, bus.Resources, written[1], value(1)); err != nil {
		t.Errorf("rewrite of a key with a value of the same size in a full bucket: %v", err)
	}
	if err := b.Delete(ctx, bus.Resources, written[0]); err != nil {
		t.Fatalf("delete in a full bucket: %v", err)
	}
	if _, err := b.Get(ctx, bus.Resources, written[0]); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("the deleted key: %v, want ErrNotFound", err)
	}
	if _, err := b.Put(ctx, bus.Status, bus.StatusKey("Secret", "default", "0", "default", "gw"), &busv1.Status{}); err != nil {
		t.Fatalf("a write to the status bucket while resources is full: %v", err)
	}
	for _, key := range written[1:] {
		if err := b.Delete(ctx, bus.Resources, key); err != nil {
			t.Fatalf("delete %s in a full bucket: %v", key, err)
		}
	}
}

// totalAlloc is the bytes the process allocated so far.
func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
