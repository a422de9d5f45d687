package translator

import (
	"context"
	"testing"
	"time"

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
