package file_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestIncrementalEqualsScan makes random changes to a folder — files
// written, rewritten, emptied, renamed and removed, objects defined twice,
// subfolders created, renamed and removed — and then checks that what the
// provider published, reading only the files events named, is what a new
// provider publishes from a scan of the whole folder: the new one, started
// on the same bucket, writes and deletes nothing.
func TestIncrementalEqualsScan(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	e := newEnv(t)
	e.write("a.yaml", services("s0"))
	stop := e.start()
	files := []string{"a.yaml", "b.yaml", "c.yml", "sub/d.yaml", "sub/e.json", "sub/deep/f.yaml", "g.txt"}
	for step := range 80 {
		name := files[rng.IntN(len(files))]
		path := e.path(name)
		ops := 10
		if step >= 40 { // file operations only: no scan of the whole folder covers them
			ops = 8
		}
		switch op := rng.IntN(ops); {
		case op < 5:
			var names []string
			for range rng.IntN(3) + 1 {
				names = append(names, fmt.Sprintf("s%d", rng.IntN(8)))
			}
			e.write(name, services(names...))
		case op == 5:
			e.write(name, "")
		case op == 6:
			_ = os.Remove(path)
		case op == 7:
			_ = os.Rename(path, e.path(files[rng.IntN(len(files))]))
		case op == 8:
			_ = os.RemoveAll(e.path("sub"))
		default:
			_ = os.Rename(e.path("sub"), e.path(fmt.Sprintf("sub-%d", step)))
			files = append(files, fmt.Sprintf("sub-%d/d.yaml", step))
		}
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
	before := e.settled()
	stop()
	e.logs = &testkit.LogBuffer{}
	e.start()
	after := e.settled()
	for _, line := range e.logs.JSONLines("") {
		if line["msg"] == "resources published" {
			t.Errorf("a provider scanning the whole folder changed what the first published: %v", line)
		}
	}
	if before != after {
		t.Errorf("bucket after the first provider:\n%s\nafter a new one:\n%s", before, after)
	}
}

// services is a manifest of Services of the given names.
func services(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: apps}\nspec:\n  ports: [{port: 80}]\n", n)
	}
	return b.String()
}

// settled waits until the bucket has kept its content for longer than a
// file caught mid-write holds its objects, and returns it: each key with
// its revision and origin.
func (e *env) settled() string {
	e.t.Helper()
	var last string
	stable := time.Now()
	deadline := time.Now().Add(20 * time.Second)
	for time.Since(stable) < 1500*time.Millisecond {
		if time.Now().After(deadline) {
			e.t.Fatal("the bucket kept changing for 20s")
		}
		var b strings.Builder
		for _, key := range sortedSet(e.keys()) {
			res, rev := e.get(key)
			fmt.Fprintf(&b, "%s@%d %s\n", key, rev, res.GetOrigin())
		}
		if b.String() != last {
			last, stable = b.String(), time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
