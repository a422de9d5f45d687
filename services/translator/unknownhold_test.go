package translator

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
)

// garbageWriter writes a value that does not decode to a fresh
// HTTPRoute key every period, as someone who can write the resources
// bucket could, until the test ends.
func garbageWriter(t *testing.T, b *bus.Bus, period time.Duration) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := 0; ; i++ {
			writeGarbage(t, b, bus.ResourceKey("HTTPRoute", "bench", fmt.Sprintf("junk-%d", i)))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	t.Cleanup(func() {
		close(done)
		wg.Wait()
	})
}

// TestFreshUndecodableKeysDoNotHoldTranslation writes garbage to a new
// key of the resources bucket every 100 ms while a translator runs, and
// checks that route edits are still translated within 5 s each: an
// unknown key holds no translation once the session has translated.
func TestFreshUndecodableKeysDoNotHoldTranslation(t *testing.T) {
	const bound = 5 * time.Second
	b := bustest.New(t)
	gwKey := bus.GatewayKey("bench", "eg")
	putYAMLString(t, b, gatewaytest.GatewayClass()+gatewaytest.Gateway("bench", "eg"))
	putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", 0)+gatewaytest.TenantBackends("bench", 0))
	got := commits(t, b, gwKey)
	s, _ := startService(t, b)
	waitReady(t, s)
	garbageWriter(t, b, 100*time.Millisecond)
	for i := 1; i <= 3; i++ {
		time.Sleep(time.Second) // several fresh keys between edits
		start := time.Now()
		putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", i)+gatewaytest.TenantBackends("bench", i))
		waitVHosts(t, got, i+1, bound)
		t.Logf("route-%d translated in %s while garbage was written", i, time.Since(start).Round(time.Millisecond))
	}
}

// TestUndecodableKeysHoldOneBudget restarts a translator over a bucket
// whose route-1 key holds garbage, writes garbage to a new key every
// 300 ms meanwhile, and checks that the hold of unknown keys is one
// budget (here 2 s) from the first, not a wait per key: the translator
// holds at first, then translates within the budget and a margin.
func TestUndecodableKeysHoldOneBudget(t *testing.T) {
	const budget = 2 * time.Second
	b := bustest.New(t)
	putYAMLString(t, b, gatewaytest.GatewayClass()+gatewaytest.Gateway("bench", "eg"))
	for i := range 3 {
		putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", i)+gatewaytest.TenantBackends("bench", i))
	}
	first, stop := startService(t, b)
	waitReady(t, first)
	stop()
	writeGarbage(t, b, bus.ResourceKey("HTTPRoute", "bench", "route-1"))
	garbageWriter(t, b, 300*time.Millisecond)

	cfg := DefaultConfig()
	cfg.Debounce = 5 * time.Millisecond
	second, err := New(cfg, b, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	second.undecodableWait = budget
	start := time.Now()
	runService(t, second)
	time.Sleep(budget / 2)
	if second.Ready() {
		t.Fatal("translated while route-1 was unknown, within the budget")
	}
	deadline := start.Add(budget + 5*time.Second)
	for !second.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("not translated %s after start with fresh garbage every 300 ms; the hold's budget is %s", time.Since(start).Round(time.Millisecond), budget)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("translated %s after start", time.Since(start).Round(time.Millisecond))
}

// waitVHosts waits up to d for a commit of want virtual hosts.
func waitVHosts(t *testing.T, got <-chan int, want int, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case n := <-got:
			if n == want {
				return
			}
		case <-timeout:
			t.Fatalf("no snapshot of %d virtual hosts within %s", want, d)
		}
	}
}
