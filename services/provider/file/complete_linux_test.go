//go:build linux

package file

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCompletionsReportWholeFiles writes files the ways writers do and
// checks that the second inotify watch names each file once its content is
// whole, and nothing for a file only read.
func TestCompletionsReportWholeFiles(t *testing.T) {
	c, err := newCompletions()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, sub} {
		if err := c.add(d); err != nil {
			t.Fatal(err)
		}
	}
	next := func(want string) {
		t.Helper()
		select {
		case got := <-c.Names():
			if got != want {
				t.Fatalf("completed %s, want %s", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no completion of %s", want)
		}
	}
	a := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(a, []byte("kind: A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next(a) // written in place and closed

	if data, err := os.ReadFile(a); err != nil || len(data) == 0 {
		t.Fatal(data, err)
	}
	b := filepath.Join(sub, "b.yaml")
	if err := os.WriteFile(b+".tmp", []byte("kind: B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b+".tmp", b); err != nil {
		t.Fatal(err)
	}
	next(b + ".tmp") // not a.yaml: reading it completes nothing
	next(b)          // renamed into place

	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if err := c.add(dir); err == nil {
		t.Error("a closed watch added a folder")
	}
}
