package status_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/status"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// follow runs a store over b until the test ends.
func follow(t *testing.T, b *bus.Bus, s *status.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Follow(ctx, b); err != nil {
			t.Errorf("Follow: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func TestStoreKeepsEntriesByObject(t *testing.T) {
	ctx := context.Background()
	b := bustest.New(t)
	route := status.Object{Kind: "HTTPRoute", Namespace: "default", Name: "r.1"}
	keyA := bus.StatusKey(route.Kind, route.Namespace, route.Name, "default", "a")
	keyB := bus.StatusKey(route.Kind, route.Namespace, route.Name, "default", "b")
	if _, err := b.Put(ctx, bus.Status, keyA, &busv1.Status{ObservedGeneration: 1}); err != nil {
		t.Fatal(err)
	}
	s := status.NewStore(nil)
	var mu sync.Mutex
	var changes []status.Change
	s.Subscribe(func(c status.Change) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, c)
	})
	follow(t, b, s)
	if err := s.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	if es := s.Entries(route); len(es) != 1 || es[0].Key != keyA {
		t.Fatalf("entries after the initial read: %+v", es)
	}
	for _, key := range []string{keyB, keyA} { // keyA again: the same value, no change
		if _, err := b.Put(ctx, bus.Status, key, &busv1.Status{ObservedGeneration: 1}); err != nil {
			t.Fatal(err)
		}
	}
	dp := bus.DataPlaneStatusKey("default", "gw", "xds-0")
	if _, err := b.Put(ctx, bus.Status, dp, &busv1.Status{}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "the data-plane entry is read", func() bool {
		es := s.Entries(status.Object{Kind: "Gateway", Namespace: "default", Name: "gw"})
		return len(es) == 1 && es[0].DataPlane
	})
	if err := b.Delete(ctx, bus.Status, keyA); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "the deletion is read", func() bool { return len(s.Entries(route)) == 1 })
	if es := s.Entries(route); es[0].Key != keyB {
		t.Errorf("entries %+v, want only %s", es, keyB)
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, c := range changes {
		got = append(got, c.Key+" "+map[bool]string{true: "put", false: "delete"}[c.Status != nil])
	}
	want := []string{keyA + " put", keyB + " put", dp + " put", keyA + " delete"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if objs := s.Objects("HTTPRoute"); len(objs) != 1 || objs[0] != route {
		t.Errorf("Objects(HTTPRoute) = %v", objs)
	}
}

func TestLoggerWritesOneLinePerChange(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fn := status.Logger(log)
	o := status.Object{Kind: "Gateway", Namespace: "default", Name: "gw"}
	fn(status.Change{Object: o, Key: "k", Status: &busv1.Status{
		Conditions: []*busv1.Condition{cond("Accepted", "True", "Accepted"), cond("Programmed", "False", "Invalid")},
	}})
	fn(status.Change{Object: o, Key: "k"})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `conditions="Accepted=True Programmed=False(Invalid)"`) ||
		!strings.Contains(lines[1], "status removed") {
		t.Errorf("log:\n%s", buf.String())
	}
}
