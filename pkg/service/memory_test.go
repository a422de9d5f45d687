package service

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/testkit"
)

func TestMemoryValidate(t *testing.T) {
	for _, tc := range []struct {
		m    Memory
		want string
	}{
		{Memory{Limit: "lots", TrimFree: "4MiB"}, "GATEWIRE_MEMORY_LIMIT"},
		{Memory{Limit: "200MiB", TrimFree: "-1"}, "GATEWIRE_MEMORY_TRIM_FREE"},
		{Memory{Trim: -time.Second}, "GATEWIRE_MEMORY_TRIM_INTERVAL"},
	} {
		if err := tc.m.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", tc.m, err, tc.want)
		}
	}
	if err := (Memory{Limit: "1GiB", Trim: time.Minute, TrimFree: "512KiB"}).Validate(); err != nil {
		t.Errorf("valid memory configuration: %v", err)
	}
	if n, _ := ParseBytes("3MiB"); n != 3<<20 {
		t.Errorf("3MiB = %d bytes", n)
	}
}

var sink [][]byte

// TestMemoryTrimAfterReady leaves 64 MiB of garbage behind, as an initial
// load does, and checks that the runner returns it once the service is ready.
func TestMemoryTrimAfterReady(t *testing.T) {
	for range 64 {
		sink = append(sink, make([]byte, 1<<20))
	}
	sink = nil
	runtime.GC()
	if free := heapFree(); free < 32<<20 {
		t.Logf("only %d bytes free before the trim (the scavenger was quick)", free)
	}
	var ready atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	m := Memory{Trim: time.Hour, TrimFree: "4MiB"}
	done := make(chan error, 1)
	go func() { done <- m.Runner(ready.Load, slog.New(slog.NewTextHandler(io.Discard, nil))).Run(ctx) }()
	ready.Store(true)
	testkit.EventuallyValue(t, 5*time.Second, "at most 16 MiB of free heap after ready", func() (uint64, bool) {
		free := heapFree()
		return free, free <= 16<<20
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestMemoryTrimWaitsForQuiet keeps the process allocating after it is
// ready, as a burst of edits after a load does, and checks that the trim of
// the initial load waits until the allocations stop.
func TestMemoryTrimWaitsForQuiet(t *testing.T) {
	var logs testkit.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	busy, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-busy:
				return
			case <-time.After(10 * time.Millisecond):
				sink = append(sink[:0], make([]byte, 256<<10)) // 25 MiB a second
			}
		}
	}()
	m := Memory{Trim: time.Hour, TrimFree: "4MiB"}
	done := make(chan error, 1)
	go func() { done <- m.Runner(func() bool { return true }, log).Run(ctx) }()
	time.Sleep(1500 * time.Millisecond)
	if logs.Has("memory trimmed") {
		t.Errorf("trimmed while the process allocated:\n%s", logs.String())
	}
	close(busy)
	<-stopped
	sink = nil
	testkit.Eventually(t, 5*time.Second, "a trim once the allocations stop", func() bool { return logs.Has("memory trimmed", "initial load") })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestMemorySettlingTrims checks that the intervals after a trim trim
// again when little is free, and so free what a cache let go of after the
// work: a sync.Pool of 32 MiB of buffers, as the embedded NATS server's
// file store fills, filled after the initial trim.
func TestMemorySettlingTrims(t *testing.T) {
	var logs testkit.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	m := Memory{Trim: 200 * time.Millisecond, TrimFree: "1GiB"} // never enough free
	done := make(chan error, 1)
	go func() { done <- m.Runner(func() bool { return true }, log).Run(ctx) }()
	testkit.Eventually(t, 10*time.Second, "the initial trim", func() bool { return logs.Has("memory trimmed", "initial load") })

	var pool sync.Pool
	gcPercent := debug.SetGCPercent(-1) // no collection while the pool fills
	for range 32 {
		b := make([]byte, 1<<20)
		pool.Put(&b)
	}
	debug.SetGCPercent(gcPercent)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	full := ms.HeapAlloc
	testkit.EventuallyValue(t, 10*time.Second, "24 MiB less heap once two settling trims ran", func() (uint64, bool) {
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc, strings.Count(logs.String(), "after=settling") == settleTrims && ms.HeapAlloc+24<<20 < full
	})
	time.Sleep(time.Second) // five intervals
	if n := strings.Count(logs.String(), "memory trimmed"); n != 1+settleTrims {
		t.Errorf("%d trims, want the initial one and %d settling ones:\n%s", n, settleTrims, logs.String())
	}
	runtime.KeepAlive(&pool)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
