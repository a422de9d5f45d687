package syncmark_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/syncmark"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMarks writes SYNCING, an object, then SYNCED on a real NATS server,
// and reads the marks back as the translator does.
func TestMarks(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	m := syncmark.New(b, "file")
	if err := m.Syncing(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	mark := read(t, b)
	if mark.GetState() != busv1.SyncMark_STATE_SYNCING || mark.GetSource() != "file" || mark.GetProvider() == "" {
		t.Fatalf("SYNCING mark: %v", mark)
	}
	if d := time.Until(time.Unix(0, mark.GetDeadlineUnixNano())); d <= 0 || d > time.Minute {
		t.Errorf("SYNCING deadline in %s, want within a minute", d)
	}
	rev, err := b.Put(ctx, bus.Resources, bus.ResourceKey("Service", "default", "a"), &busv1.Resource{Origin: "file:a.yaml:1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Synced(ctx, 1); err != nil {
		t.Fatal(err)
	}
	mark = read(t, b)
	if mark.GetState() != busv1.SyncMark_STATE_SYNCED || mark.GetObjects() != 1 || mark.GetRevision() < rev {
		t.Fatalf("SYNCED mark: %v, want 1 object at revision ≥ %d", mark, rev)
	}
}

func read(t *testing.T, b *bus.Bus) *busv1.SyncMark {
	t.Helper()
	e, err := b.Get(context.Background(), bus.Resources, bus.SyncKey("file"))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := e.Value.(*busv1.SyncMark)
	if !ok {
		t.Fatalf("%s holds %T", e.Key, e.Value)
	}
	return m
}
