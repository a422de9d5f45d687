package testkit

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

// update is the one -update flag of every test binary that imports
// testkit: with it, Golden rewrites the files instead of comparing.
var update = flag.Bool("update", false, "rewrite the golden files from the current output (review the diff)")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Golden compares got with the content of the file path and fails the test
// when they differ; with -update it writes got to path instead. A missing
// file fails the test and says how to create it.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the output differs from %s (run go test -update and review the diff):\n%s", path, got)
	}
}
