package translator

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// putMark writes a provider's sync mark.
func putMark(t *testing.T, b *bus.Bus, state busv1.SyncMark_State, deadline time.Time) {
	t.Helper()
	m := &busv1.SyncMark{Source: "file", State: state, Provider: "test"}
	if !deadline.IsZero() {
		m.DeadlineUnixNano = deadline.UnixNano()
	}
	if _, err := b.Put(context.Background(), bus.Resources, bus.SyncKey("file"), m); err != nil {
		t.Fatal(err)
	}
}

// commits follows the gateway's commits in the xds bucket and sends the
// number of virtual hosts of each, assembled.
func commits(t *testing.T, b *bus.Bus, gwKey string) <-chan int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := b.Watch(ctx, bus.XDS, ">")
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan int, 100)
	go func() {
		defer w.Stop()
		stage := xdsbucket.NewStage(nil)
		for e := range w.Updates() {
			if e == nil {
				continue
			}
			if r := stage.Apply(e); r.Snapshot != nil && r.Gateway == gwKey {
				out <- vhostsOf(r.Snapshot)
			}
		}
	}()
	return out
}

func vhostsOf(s *busv1.XdsSnapshot) int {
	n := 0
	for _, t := range s.GetResources() {
		if t.GetTypeUrl() != xdsbucket.RouteType {
			continue
		}
		for _, a := range t.GetResources() {
			_, vhs, _ := xdsbucket.SplitRoute(a.GetValue())
			n += len(vhs)
		}
	}
	return n
}

// TestSyncMarksHoldTranslation writes a provider's SYNCING mark, then a
// gateway and 200 routes one by one, then SYNCED, and checks that the
// translator publishes one snapshot of the gateway, with every route, and
// only after SYNCED; then that a batch of edits between marks is
// translated once, and that a SYNCING mark past its deadline stops
// holding.
func TestSyncMarksHoldTranslation(t *testing.T) {
	const routes = 100
	b := bustest.New(t)
	gwKey := bus.GatewayKey("bench", "eg")
	got := commits(t, b, gwKey)
	s, _ := startService(t, b)
	putMark(t, b, busv1.SyncMark_STATE_SYNCING, time.Now().Add(time.Minute))
	putYAMLString(t, b, gatewaytest.GatewayClass()+gatewaytest.Gateway("bench", "eg"))
	for i := range routes {
		putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", i)+gatewaytest.TenantBackends("bench", i))
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case n := <-got:
		t.Fatalf("a snapshot with %d virtual hosts was published while the provider was syncing", n)
	default:
	}
	if s.Ready() {
		t.Fatal("ready while the provider syncs")
	}
	putMark(t, b, busv1.SyncMark_STATE_SYNCED, time.Time{})
	if n := <-got; n != routes {
		t.Fatalf("first snapshot has %d virtual hosts, want %d", n, routes)
	}
	waitReady(t, s)

	putMark(t, b, busv1.SyncMark_STATE_SYNCING, time.Now().Add(time.Minute))
	for i := range 20 {
		putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", routes+i)+gatewaytest.TenantBackends("bench", routes+i))
	}
	putMark(t, b, busv1.SyncMark_STATE_SYNCED, time.Time{})
	if n := <-got; n != routes+20 {
		t.Fatalf("the batch gave a snapshot with %d virtual hosts, want %d", n, routes+20)
	}
	select {
	case n := <-got:
		t.Fatalf("the batch was translated more than once (then %d virtual hosts)", n)
	case <-time.After(200 * time.Millisecond):
	}

	putMark(t, b, busv1.SyncMark_STATE_SYNCING, time.Now().Add(500*time.Millisecond))
	putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", 999)+gatewaytest.TenantBackends("bench", 999))
	select {
	case n := <-got:
		if n != routes+21 {
			t.Fatalf("after the deadline: %d virtual hosts, want %d", n, routes+21)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a SYNCING mark past its deadline still holds translation")
	}
}

// TestUndecodableValueIsUnknown: a translator that starts while a route's
// key holds a value that does not decode, and has no earlier value of it,
// does not publish the gateway without the route; once the value is
// written again it publishes the gateway with it.
func TestUndecodableValueIsUnknown(t *testing.T) {
	b := bustest.New(t)
	gwKey := bus.GatewayKey("bench", "eg")
	putYAMLString(t, b, gatewaytest.GatewayClass()+gatewaytest.Gateway("bench", "eg"))
	for i := range 3 {
		putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", i)+gatewaytest.TenantBackends("bench", i))
	}
	first, stop := startService(t, b)
	waitReady(t, first)
	before := waitFor(t, b, bus.XDS, gwKey, func(e *bus.Entry) bool { return e != nil })
	stop()

	key := bus.ResourceKey("HTTPRoute", "bench", "route-1")
	good, err := b.Get(context.Background(), bus.Resources, key)
	if err != nil {
		t.Fatal(err)
	}
	garbage := &nats.Msg{Subject: "$KV." + b.BucketName(bus.Resources) + "." + key, Header: nats.Header{}, Data: []byte{0xff, 0xff, 0x01}}
	garbage.Header.Set(bus.HeaderType, "gatewire.bus.v1.Resource")
	if err := b.Conn().PublishMsg(garbage); err != nil {
		t.Fatal(err)
	}
	if err := b.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	got := commits(t, b, gwKey)
	<-got // the commit as the first translator left it
	second, _ := startService(t, b)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case n := <-got:
			t.Fatalf("published a snapshot of %d virtual hosts while route-1 was unknown", n)
		case <-time.After(50 * time.Millisecond):
		}
		if second.Ready() {
			t.Fatal("the translator translated its gateways while route-1 was unknown")
		}
	}
	if _, err := b.Put(context.Background(), bus.Resources, key, good.Value); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-got:
		t.Fatalf("published %d virtual hosts; the snapshot before the restart is complete and should stay", n)
	case <-time.After(time.Second):
	}
	waitReady(t, second)
	after := waitFor(t, b, bus.XDS, gwKey, func(e *bus.Entry) bool { return e != nil })
	if after.Value.(*busv1.XdsSnapshot).GetVersion() != before.Value.(*busv1.XdsSnapshot).GetVersion() {
		t.Fatalf("the snapshot changed from %s to %s", before.Value.(*busv1.XdsSnapshot).GetVersion(), after.Value.(*busv1.XdsSnapshot).GetVersion())
	}
}
