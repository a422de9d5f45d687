package file

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// TestDelayFollowsWholeFiles checks when a sync waits for the folder to be
// quiet: only while a file named since the last sync may still be being
// written, removed for good or replaced, or the folder must be scanned.
func TestDelayFollowsWholeFiles(t *testing.T) {
	dir := t.TempDir()
	r := &runner{
		Provider:  &Provider{dir: dir, log: slog.New(slog.DiscardHandler)},
		folder:    newFolder(dir, slog.New(slog.DiscardHandler), 1<<20),
		changed:   map[string]bool{},
		unsettled: map[string]bool{},
		completed: map[string]bool{},
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	event := func(op fsnotify.Op, name string) bool { return r.note(fsnotify.Event{Name: path(name), Op: op}) }
	wantDelay := func(step string, want time.Duration) {
		t.Helper()
		if got := r.delay(); got != want {
			t.Errorf("%s: delay %s, want %s", step, got, want)
		}
	}

	if event(fsnotify.Write, "notes.txt") || event(fsnotify.Create, "a.yaml.tmp") || event(fsnotify.Rename, "a.yaml.tmp") {
		t.Error("an event of a file no sync reads asks for a sync")
	}
	if r.complete(path("a.yaml.tmp")) {
		t.Error("a completed file no sync reads asks for a sync")
	}
	if r.complete(path("a.yaml")) {
		t.Error("a completion before any event asks for a sync: there is nothing to read yet")
	}
	if !event(fsnotify.Create, "a.yaml") || !r.changed[path("a.yaml")] {
		t.Fatal("a manifest's event does not mark it changed")
	}
	wantDelay("a.yaml completed, then its event", completeDelay)

	if !event(fsnotify.Write, "b.yaml") {
		t.Fatal("a write of a manifest asks for no sync")
	}
	wantDelay("b.yaml written", settleDelay)
	if !r.complete(path("b.yaml")) {
		t.Fatal("a completed write asks for no sync")
	}
	wantDelay("b.yaml closed", completeDelay)
	event(fsnotify.Write, "b.yaml") // the same write, seen by fsnotify after the close
	wantDelay("b.yaml's event after its close", completeDelay)

	event(fsnotify.Remove, "c.yaml")
	wantDelay("c.yaml removed", settleDelay)
	r.complete(path("c.yaml")) // written again: an editor's replace
	wantDelay("c.yaml replaced", completeDelay)
	event(fsnotify.Rename, "b.yaml")
	wantDelay("b.yaml renamed away after its close", settleDelay)
	r.complete(path("b.yaml"))

	event(fsnotify.Create, "..data") // a ConfigMap volume's link swap
	if !r.full {
		t.Fatal("a hidden name does not ask for a scan")
	}
	wantDelay("a scan is due", settleDelay)

	r.full = false
	if _, ok := r.read(); !ok {
		t.Fatal("read failed")
	}
	if len(r.unsettled)+len(r.completed) > 0 {
		t.Errorf("a sync leaves unsettled %v, completed %v", r.unsettled, r.completed)
	}
}
