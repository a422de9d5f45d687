package file_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/provider/file"
)

// startWith is start with options.
func (e *env) startWith(opts ...file.Option) {
	e.t.Helper()
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := file.New(e.dir, e.bus, log, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.p = p
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run: %v", err)
		}
	})
	e.eventually(startTimeout, "the provider is ready", p.Ready)
}

// TestOversizedFileIsRefused rewrites a route's file with a new hostname
// and a comment that takes it past the size limit: the file is reported
// as too large, naming it and the variable to raise, and the route keeps
// its last good content.
func TestOversizedFileIsRefused(t *testing.T) {
	const limit = 64 << 10
	e := newEnv(t)
	e.write("route.yaml", routeDoc("backend", "www.example.com"))
	e.startWith(file.WithMaxFileBytes(limit))
	_, goodRev := e.get(routeKey)

	e.write("route.yaml", routeDoc("backend", "big.example.com")+"# "+strings.Repeat("x", 2*limit)+"\n")
	e.eventually(contract, "the file is reported too large", func() bool {
		text := e.problemText()
		return strings.Contains(text, e.path("route.yaml")) && strings.Contains(text, "too large") &&
			strings.Contains(text, "GATEWIRE_PROVIDER_MAX_FILE_BYTES")
	})
	if got, rev := e.get(routeKey); got == nil || rev != goodRev || strings.Contains(string(got.Object), "big.example.com") {
		t.Errorf("the route of the oversized file was not kept as it was: revision %d (was %d): %s", rev, goodRev, got.GetObject())
	}
}

// TestInPlaceRewriteDeletesNothing rewrites a route's file in place, as
// `cat > f` does (truncate, then write), 50 times, while a watch of the
// bucket looks for a deletion of the route: there is none, although the
// provider sees the file empty now and then.
func TestInPlaceRewriteDeletesNothing(t *testing.T) {
	e := newEnv(t)
	content := routeDoc("backend", "www.example.com")
	e.write("route.yaml", content)
	e.start()

	ctx, cancel := context.WithCancel(context.Background())
	w, err := e.bus.Watch(ctx, bus.Resources, routeKey)
	if err != nil {
		t.Fatal(err)
	}
	var deletes int
	var wg sync.WaitGroup
	wg.Go(func() {
		for en := range w.Updates() {
			if en != nil && en.Op == bus.OpDelete {
				deletes++
			}
		}
	})
	for range 50 {
		f, err := os.OpenFile(e.path("route.yaml"), os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the provider reads the empty file
		if _, err := f.WriteString(content); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // past the settle time
	w.Stop()
	cancel()
	wg.Wait()
	if deletes > 0 {
		t.Errorf("the route was deleted %d times while its file was rewritten in place", deletes)
	}
	if r, _ := e.get(routeKey); r == nil {
		t.Error("the route is not on the bus after the rewrites")
	}
}
