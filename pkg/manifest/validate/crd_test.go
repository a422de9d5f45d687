package validate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gatewayAPIVersion is the sigs.k8s.io/gateway-api version the embedded
// CustomResourceDefinitions come from.
const gatewayAPIVersion = "v1.6.3"

// TestCRDsMatchModule checks that the embedded CustomResourceDefinitions are
// the experimental-channel files of the pinned sigs.k8s.io/gateway-api, byte
// for byte, and that every Gateway API kind of that channel is embedded.
// After a version bump, copy the module's files again.
func TestCRDsMatchModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if version != gatewayAPIVersion {
		t.Errorf("module sigs.k8s.io/gateway-api is %s, the embedded CRDs are from %s: copy config/crd/experimental again", version, gatewayAPIVersion)
	}
	moduleFiles, err := filepath.Glob(filepath.Join(dir, "config/crd/experimental/gateway.networking.k8s.io_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	embedded := map[string]bool{}
	for _, c := range crds {
		embedded[filepath.Base(c.file)] = true
	}
	for _, path := range moduleFiles {
		name := filepath.Base(path)
		if strings.Contains(name, "_vap_") { // a ValidatingAdmissionPolicy, not a CRD
			continue
		}
		if !embedded[name] {
			t.Errorf("%s is not embedded: add it to crds/ and to the crds map", name)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := crdFiles.ReadFile("crds/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("crds/%s differs from %s: copy it again", name, path)
		}
		delete(embedded, name)
	}
	for name := range embedded {
		t.Errorf("crds/%s is not in the module's experimental channel", name)
	}
}

// TestKindsLoad checks that every embedded CustomResourceDefinition parses,
// names the kind it is filed under and compiles in every served version.
func TestKindsLoad(t *testing.T) {
	for _, kind := range GatewayKinds() {
		c := crds[kind]
		if err := c.load(); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		data, _ := crdFiles.ReadFile(c.file)
		if !bytes.Contains(data, []byte("\n    kind: "+kind+"\n")) {
			t.Errorf("%s is not the CRD of %s", c.file, kind)
		}
		for name := range c.versions {
			if _, err := c.schema(name); err != nil {
				t.Errorf("%s %s: %v", kind, name, err)
			}
		}
	}
}
