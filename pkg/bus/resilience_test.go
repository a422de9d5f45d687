package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// A heartbeat that ages out of the members bucket reaches watchers as a
// deletion: the bucket keeps a marker in its place.
func TestMemberExpiryReachesWatchers(t *testing.T) {
	b := bustest.New(t, bus.WithMemberTTL(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := b.Watch(ctx, bus.Members, ">")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if e := <-w.Updates(); e != nil {
		t.Fatalf("first entry %+v, want the end of the initial sync", e)
	}
	key := bus.MemberKey("a")
	if _, err := b.Put(ctx, bus.Members, key, &busv1.Member{Id: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []bus.Op{bus.OpPut, bus.OpDelete} {
		select {
		case e := <-w.Updates():
			if e.Key != key || e.Op != want {
				t.Fatalf("entry %s %s, want %s %s", e.Key, e.Op, key, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %s of %s", want, key)
		}
	}
	if _, err := b.Get(ctx, bus.Members, key); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("Get of an expired member: %v, want ErrNotFound", err)
	}
}

// Without limit markers (LimitMarkerTTL), a key that ages out of a bucket
// vanishes without a message: a watcher learns nothing. This is why the
// members bucket has them, and why readers keep their own clock too.
func TestExpiryWithoutMarkersIsSilent(t *testing.T) {
	nc := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "silent", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	if _, err := kv.Put(ctx, "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	for { // wait until a has aged out
		if _, err := kv.Get(ctx, "a"); errors.Is(err, jetstream.ErrKeyNotFound) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := kv.Put(ctx, "b", []byte("1")); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for e := range w.Updates() {
		if e == nil {
			continue
		}
		seen = append(seen, e.Key()+" "+e.Operation().String())
		if e.Key() == "b" {
			break
		}
	}
	if len(seen) != 2 || seen[0] != "a KeyValuePutOp" {
		t.Fatalf("watch saw %v; want the put of a, then b: no deletion of a", seen)
	}
}

// A watch resumes after its server restarts on the same port and storage:
// nothing written before is lost and what is written after arrives.
func TestWatchResumesAfterServerRestart(t *testing.T) {
	srv := bustest.StartRestartable(t)
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b := bustest.Open(t, nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := bus.ResourceKey("Service", "default", "before")
	if _, err := b.Put(ctx, bus.Resources, first, resource("before", nil)); err != nil {
		t.Fatal(err)
	}
	w, err := b.Watch(ctx, bus.Resources, ">")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if e := <-w.Updates(); e == nil || e.Key != first {
		t.Fatalf("first entry %+v, want %s", e, first)
	}
	if e := <-w.Updates(); e != nil {
		t.Fatalf("entry %+v, want the end of the initial sync", e)
	}

	srv.Stop()
	srv.Start()
	second := bus.ResourceKey("Service", "default", "after")
	for { // writes fail until the client has reconnected
		if _, err := b.Put(ctx, bus.Resources, second, resource("after", nil)); err == nil {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("no write after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case e := <-w.Updates():
		if e == nil || e.Key != second || e.Op != bus.OpPut {
			t.Fatalf("entry after the restart %+v, want the put of %s", e, second)
		}
	case <-ctx.Done():
		t.Fatal("the watch did not resume after the restart")
	}
	if _, err := b.Get(ctx, bus.Resources, first); err != nil {
		t.Fatalf("value written before the restart: %v", err)
	}
}

// A headers-only watch delivers the writer's headers and no value, and
// its synced revision counts the deletions its initial sync leaves out.
func TestHeadersOnlyWatch(t *testing.T) {
	b := bustest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := bus.GatewayKey("default", "gw")
	if _, err := b.Put(ctx, bus.IR, key, resource("gw", nil), bus.WithHeader("Gatewire-Digest", "abc"),
		bus.WithHeader("Nats-Expected-Stream", "nope"), bus.WithHeader(bus.HeaderType, "nope")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, bus.IR, "default.gone", resource("gone", nil)); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, bus.IR, "default.gone", bus.WithHeader("Gatewire-Digest", "-")); err != nil {
		t.Fatal(err)
	}
	last, err := b.Get(ctx, bus.IR, key)
	if err != nil {
		t.Fatal(err)
	}
	if last.Header.Get(bus.HeaderType) != "gatewire.bus.v1.Resource" {
		t.Fatalf("a writer's header replaced %s: %q", bus.HeaderType, last.Header.Get(bus.HeaderType))
	}
	w, err := b.Watch(ctx, bus.IR, ">", bus.HeadersOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e := <-w.Updates()
	if e == nil || e.Key != key || e.Value != nil || e.Err != nil || e.Header.Get("Gatewire-Digest") != "abc" {
		t.Fatalf("headers-only entry %+v, want %s with its digest header and no value", e, key)
	}
	if e := <-w.Updates(); e != nil {
		t.Fatalf("entry %+v, want the end of the initial sync", e)
	}
	if got, want := w.SyncedRevision(), last.Revision+2; got != want {
		t.Fatalf("synced revision %d, want %d (the deletion)", got, want)
	}
}
