package file_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// TestSyncMarks checks the file provider's sync marks as a reader of the
// bucket sees them: the folder's first publication and a batch of changes
// are each between a SYNCING and a SYNCED mark, and a single change is
// written alone.
func TestSyncMarks(t *testing.T) {
	e := newEnv(t)
	e.write("all.yaml", gatewayDoc+"---\n"+routeDoc("backend", "www.example.com")+"---\n"+serviceDoc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := e.bus.Watch(ctx, bus.Resources, ">")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if e := <-w.Updates(); e != nil {
		t.Fatalf("the bucket is not empty: %s", e.Key)
	}
	e.start()
	expect(t, w, "SYNCING", "put", "put", "put", "SYNCED 3")

	e.write("two.yaml", routeDoc("a", "a.example.com")+"---\n"+routeDoc("b", "b.example.com"))
	expect(t, w, "SYNCING", "put", "put", "SYNCED 5")

	e.write("two.yaml", routeDoc("a", "a.example.com")+"---\n"+routeDoc("b", "c.example.com"))
	expect(t, w, "put")
}

// expect reads the next entries of w and compares them, as "put",
// "delete", "SYNCING" or "SYNCED <objects>", with want.
func expect(t *testing.T, w *bus.Watcher, want ...string) {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case e := <-w.Updates():
			got = append(got, describe(e))
		case <-timeout:
			t.Fatalf("entries %v, want %v", got, want)
		}
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("entries %v, want %v", got, want)
	}
}

func describe(e *bus.Entry) string {
	if m, ok := e.Value.(*busv1.SyncMark); ok {
		if m.GetState() == busv1.SyncMark_STATE_SYNCED {
			return fmt.Sprintf("SYNCED %d", m.GetObjects())
		}
		return "SYNCING"
	}
	if e.Op == bus.OpDelete {
		return "delete"
	}
	return "put"
}
