package deploy

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gatewayAPIModule provides the CRDs; deploy/k8s/base/crds/gateway-api is a
// copy of its config/crd folder.
const gatewayAPIModule = "sigs.k8s.io/gateway-api"

// TestCRDsAreTheModules checks that the CRDs in deploy/ are exactly those of
// the sigs.k8s.io/gateway-api version this module requires. After a version
// bump, copy the folder again:
//
//	rm -r deploy/k8s/base/crds/gateway-api
//	cp -r "$(cd integration && go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd" deploy/k8s/base/crds/gateway-api
//	chmod -R u+w deploy/k8s/base/crds/gateway-api
func TestCRDsAreTheModules(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", gatewayAPIModule).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", gatewayAPIModule, err)
	}
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if dir == "" {
		t.Fatalf("go list -m %s: the module is not downloaded; run go mod download", gatewayAPIModule)
	}
	want := filepath.Join(dir, "config", "crd")
	got := filepath.Join(k8sDir(t), "base", "crds", "gateway-api")
	wantFiles, gotFiles := files(t, want), files(t, got)
	for rel, data := range wantFiles {
		copied, ok := gotFiles[rel]
		switch {
		case !ok:
			t.Errorf("%s: missing; it is in %s@%s", rel, gatewayAPIModule, version)
		case !bytes.Equal(copied, data):
			t.Errorf("%s: differs from %s@%s", rel, gatewayAPIModule, version)
		}
	}
	for rel := range gotFiles {
		if _, ok := wantFiles[rel]; !ok {
			t.Errorf("%s: not in %s@%s", rel, gatewayAPIModule, version)
		}
	}
	if t.Failed() {
		t.Logf("copy the CRDs again from %s (see this test's comment)", want)
	}
}

// files reads every file under dir, by path relative to dir.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no files", dir)
	}
	return out
}
