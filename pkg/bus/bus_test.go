package bus_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

func resource(name string, object []byte) *busv1.Resource {
	return &busv1.Resource{Kind: "Service", Namespace: "default", Name: name, Object: object}
}

func TestNewIsIdempotent(t *testing.T) {
	nc := bustest.Start(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := bus.New(ctx, nc, bus.WithSystem("same")); err != nil {
			t.Fatalf("New #%d: %v", i+1, err)
		}
	}
	if _, err := bus.New(ctx, nc, bus.WithSystem("bad.name")); err == nil {
		t.Fatal("New accepted a system name with a dot")
	}
}

func TestPutGetDelete(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	key := bus.ResourceKey("Service", "default", "web.v1")
	if key != "Service.default.web_v1" {
		t.Fatalf("ResourceKey = %q", key)
	}
	rev, err := b.Put(ctx, bus.Resources, key, resource("web.v1", []byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := b.Get(ctx, bus.Resources, key)
	if err != nil {
		t.Fatal(err)
	}
	if e.Revision != rev || e.Header.Get(bus.HeaderType) != "gatewire.bus.v1.Resource" {
		t.Fatalf("entry rev %d type %q, want rev %d type gatewire.bus.v1.Resource", e.Revision, e.Header.Get(bus.HeaderType), rev)
	}
	if got := e.Value.(*busv1.Resource).GetName(); got != "web.v1" {
		t.Fatalf("name = %q", got)
	}
	keys, err := b.Keys(ctx, bus.Resources, "Service.>")
	if err != nil || len(keys) != 1 || keys[0] != key {
		t.Fatalf("Keys = %v, %v", keys, err)
	}
	if err := b.Delete(ctx, bus.Resources, key); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, bus.Resources, key); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("Get after delete: %v, want ErrNotFound", err)
	}
}

func TestSourceRevisionRefusesOlder(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	key := bus.GatewayKey("default", "gw")
	if _, err := b.Put(ctx, bus.IR, key, resource("new", nil), bus.WithSourceRevision(10)); err != nil {
		t.Fatal(err)
	}
	_, err := b.Put(ctx, bus.IR, key, resource("old", nil), bus.WithSourceRevision(9))
	if !errors.Is(err, bus.ErrStale) {
		t.Fatalf("older write: %v, want ErrStale", err)
	}
	if err := b.Delete(ctx, bus.IR, key, bus.WithSourceRevision(5)); !errors.Is(err, bus.ErrStale) {
		t.Fatalf("older delete: %v, want ErrStale", err)
	}
	if _, err := b.Put(ctx, bus.IR, key, resource("newer", nil), bus.WithSourceRevision(11)); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, bus.IR, key, bus.WithSourceRevision(12)); err != nil {
		t.Fatal(err)
	}
	// The deletion remembers its source revision.
	if _, err := b.Put(ctx, bus.IR, key, resource("late", nil), bus.WithSourceRevision(11)); !errors.Is(err, bus.ErrStale) {
		t.Fatalf("write older than a delete: %v, want ErrStale", err)
	}
	e, err := b.Get(ctx, bus.IR, key)
	if !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("Get = %v, %v; want ErrNotFound", e, err)
	}
}

func TestRevisionCompareAndSet(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	rev, err := b.Put(ctx, bus.Members, "translator.a", &busv1.Member{Id: "a"}, bus.WithRevision(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, bus.Members, "translator.a", &busv1.Member{Id: "a"}, bus.WithRevision(0)); !errors.Is(err, bus.ErrConflict) {
		t.Fatalf("create of an existing key: %v, want ErrConflict", err)
	}
	if _, err := b.Put(ctx, bus.Members, "translator.a", &busv1.Member{Id: "a"}, bus.WithRevision(rev)); err != nil {
		t.Fatalf("update at the right revision: %v", err)
	}
}

func TestLargeValues(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	max := int(b.Conn().MaxPayload())
	compressible := bytes.Repeat([]byte("gatewire "), 3*max/9)
	random := make([]byte, 2*max)
	for i := range random { // incompressible but deterministic
		random[i] = byte((i*7919 + i/251*31) ^ (i >> 3))
	}
	for name, data := range map[string][]byte{"compressible": compressible, "incompressible": random} {
		t.Run(name, func(t *testing.T) {
			key := bus.ResourceKey("ConfigMap", "default", name)
			if _, err := b.Put(ctx, bus.Resources, key, resource(name, data)); err != nil {
				t.Fatal(err)
			}
			e, err := b.Get(ctx, bus.Resources, key)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(e.Value.(*busv1.Resource).GetObject(), data) {
				t.Fatal("value changed on its way through the bus")
			}
			if e.Header.Get(bus.HeaderEncoding) != "zstd" {
				t.Fatalf("value of %d bytes was not compressed", len(data))
			}
		})
	}
}

func TestWatch(t *testing.T) {
	b := bustest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		key := bus.ResourceKey("Service", "default", fmt.Sprint("s", i))
		if _, err := b.Put(ctx, bus.Resources, key, resource(fmt.Sprint("s", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(ctx, bus.Resources, bus.ResourceKey("Service", "default", "s1")); err != nil {
		t.Fatal(err)
	}
	w, err := b.Watch(ctx, bus.Resources, "Service.>")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var initial []string
	for e := range w.Updates() {
		if e == nil {
			break
		}
		initial = append(initial, e.Key)
	}
	if fmt.Sprint(initial) != "[Service.default.s0 Service.default.s2]" {
		t.Fatalf("initial = %v", initial)
	}
	tp := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled,
	})
	traced := trace.ContextWithSpanContext(ctx, tp)
	if _, err := b.Put(traced, bus.Resources, "Service.default.s3", resource("s3", nil)); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, bus.Resources, "Service.default.s0"); err != nil {
		t.Fatal(err)
	}
	e := <-w.Updates()
	if e.Key != "Service.default.s3" || e.Op != bus.OpPut || !proto.Equal(e.Value, resource("s3", nil)) {
		t.Fatalf("change = %+v", e)
	}
	if got := trace.SpanContextFromContext(e.Context(context.Background())); got.TraceID() != tp.TraceID() {
		t.Fatalf("trace id = %s, want %s", got.TraceID(), tp.TraceID())
	}
	if e := <-w.Updates(); e.Key != "Service.default.s0" || e.Op != bus.OpDelete {
		t.Fatalf("change = %+v", e)
	}
}

func TestWatchEmptyBucket(t *testing.T) {
	b := bustest.New(t)
	w, err := b.Watch(context.Background(), bus.XDS, ">")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case e := <-w.Updates():
		if e != nil {
			t.Fatalf("first entry of an empty bucket = %+v, want nil", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no end-of-sync marker on an empty bucket")
	}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct{ kind, ns, name string }{
		{"Gateway", "default", "gw"}, {"GatewayClass", "", "a.b.c"},
	} {
		kind, ns, name, err := bus.ParseResourceKey(bus.ResourceKey(tc.kind, tc.ns, tc.name))
		if err != nil || kind != tc.kind || ns != tc.ns || name != tc.name {
			t.Errorf("round trip of %v = %s %s %s %v", tc, kind, ns, name, err)
		}
	}
	if _, _, _, err := bus.ParseResourceKey("Gateway.default"); err == nil {
		t.Error("ParseResourceKey accepted two tokens")
	}
	k := bus.StatusKey("HTTPRoute", "ns", "r.1", "gw-ns", "gw")
	kind, ns, name, gns, gname, err := bus.ParseStatusKey(k)
	if err != nil || kind != "HTTPRoute" || ns != "ns" || name != "r.1" || gns != "gw-ns" || gname != "gw" {
		t.Errorf("status key %q parsed as %s %s %s %s %s %v", k, kind, ns, name, gns, gname, err)
	}
}

func TestOpenOnly(t *testing.T) {
	nc := bustest.Start(t)
	ctx := context.Background()
	if _, err := bus.New(ctx, nc, bus.WithSystem("absent"), bus.WithOpenOnly()); err == nil {
		t.Fatal("open-only succeeded on an installation that does not exist")
	}
	if _, err := bus.New(ctx, nc, bus.WithSystem("present")); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.New(ctx, nc, bus.WithSystem("present"), bus.WithOpenOnly()); err != nil {
		t.Fatalf("open-only of an existing installation: %v", err)
	}
}

// TestBatch writes keys in a batch, purges one with a marker TTL, and
// checks a compare-and-set that does not hold fails the batch with
// ErrConflict.
func TestBatch(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	x := b.Batch(bus.XDS)
	for i := range 600 {
		x.Put(ctx, fmt.Sprintf("ns.gw.cds.k%d", i), &busv1.Member{Id: fmt.Sprint(i)}, bus.WithSourceRevision(7))
	}
	if err := x.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if len(x.Revisions) != 600 {
		t.Fatalf("%d revisions, want 600", len(x.Revisions))
	}
	e, err := b.Get(ctx, bus.XDS, "ns.gw.cds.k599")
	if err != nil || e.Value.(*busv1.Member).GetId() != "599" || e.SourceRevision != 7 {
		t.Fatalf("Get = %v, %v; want the last value written, source revision 7", e, err)
	}
	x = b.Batch(bus.XDS)
	x.Purge(ctx, "ns.gw.cds.k0", time.Hour)
	if err := x.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, bus.XDS, "ns.gw.cds.k0"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("Get of a purged key: %v, want ErrNotFound", err)
	}
	x = b.Batch(bus.XDS)
	x.Put(ctx, "ns.gw.cds.k1", &busv1.Member{}, bus.WithRevision(1))
	if err := x.Wait(ctx); !errors.Is(err, bus.ErrConflict) {
		t.Fatalf("Wait with a revision that does not hold: %v, want ErrConflict", err)
	}
}
