package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildTags are the tags of every gatewire build: the Makefile's GO_TAGS,
// the Dockerfiles' and the test builds'.
const buildTags = "grpcnotrace"

// reflectedMethods builds the package pkg with tags, asking the linker for
// its reachability graph, and returns the reachable functions that call
// methods by reflection (reflect.Value.MethodByName and the like).
func reflectedMethods(t *testing.T, pkg, tags string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bin")
	cmd := exec.Command("go", "build", "-tags", tags, "-ldflags=-dumpdep", "-o", out, pkg)
	var graph bytes.Buffer
	cmd.Stderr = &graph
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build %s: %v\n%.2000s", pkg, err, graph.String())
	}
	seen := map[string]bool{}
	var found []string
	sc := bufio.NewScanner(&graph)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		from, _, ok := strings.Cut(sc.Text(), " -> ")
		if fn, marked := strings.CutSuffix(from, " <ReflectMethod>"); ok && marked && !seen[fn] {
			seen[fn] = true
			found = append(found, fn)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return found
}

// TestLinkerDropsUnusedMethods checks that nothing linked into gatewire
// (which holds the four services) calls methods by reflection. One such
// call, text/template's, makes the linker keep every exported method of
// every type: the binaries were a third larger and each idle service held
// 9 MiB more of them resident.
func TestLinkerDropsUnusedMethods(t *testing.T) {
	if found := reflectedMethods(t, ".", buildTags); len(found) > 0 {
		t.Errorf("the linker keeps every exported method because of %s (go build -ldflags=-dumpdep shows who reaches them)", strings.Join(found, ", "))
	}
}

// TestBuildsUseTags checks that the Makefile and each Dockerfile build with
// buildTags, and that each Dockerfile stamps the version and commit that
// `make images` passes.
func TestBuildsUseTags(t *testing.T) {
	files, err := filepath.Glob("../../services/*/Dockerfile")
	if err != nil || len(files) != 4 {
		t.Fatalf("Dockerfiles: %v %v", files, err)
	}
	for _, f := range append(files, "../../Makefile") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if strings.Contains(line, "go build") && !strings.Contains(line, "-tags") && !strings.Contains(line, "hack/") {
				t.Errorf("%s: a build without -tags %s: %s", f, buildTags, strings.TrimSpace(line))
			}
		}
		if !strings.Contains(string(data), buildTags) {
			t.Errorf("%s does not build with -tags %s", f, buildTags)
		}
		if stamp := "buildinfo.version=${VERSION}"; strings.HasSuffix(f, "Dockerfile") && !strings.Contains(string(data), stamp) {
			t.Errorf("%s does not stamp the version (%s)", f, stamp)
		}
	}
}
