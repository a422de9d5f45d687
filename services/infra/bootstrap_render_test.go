package infra_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/infra"
)

// TestBootstrapIsWhatHostModeWrites checks that Bootstrap gives the bytes
// of the file the host mode writes for the same proxy.
func TestBootstrapIsWhatHostModeWrites(t *testing.T) {
	dir := t.TempDir()
	b := newBus(t)
	cfg := hostConfig(dir)
	start(t, cfg, b)
	p := proxy("default", "web")
	putProxy(t, b, p)
	path := filepath.Join(dir, "default-web.yaml")
	testkit.Eventually(t, 10*time.Second, "bootstrap written", func() bool { return exists(path) })
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	got, err := infra.Bootstrap(cfg, b.System(), host, p)
	if err != nil {
		t.Fatal(err)
	}
	// The file is the bootstrap after comment lines that name its gateway.
	head, ok := bytes.CutSuffix(written, got)
	if !ok {
		t.Fatalf("Bootstrap:\n%s\nthe file:\n%s", got, written)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(head), "\n"), "\n") {
		if !strings.HasPrefix(line, "# ") {
			t.Errorf("the file has %q before the bootstrap, want only comments", line)
		}
	}
}

// TestBootstrapKubernetes checks the bootstrap of kubernetes mode: the
// readiness listener and the Service address of the xds service.
func TestBootstrapKubernetes(t *testing.T) {
	cfg := infra.Config{Mode: infra.ModeKubernetes, AdminPort: 19000, Kubernetes: infra.Kubernetes{
		EnvoyImage: "envoy", Replicas: 1, ServiceType: "ClusterIP", ReadinessPort: 19001, CPURequest: "100m", MemoryRequest: "128Mi"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	got, err := infra.Bootstrap(cfg, "gatewire", "ignored", proxy("default", "web"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{infra.DefaultKubernetesXDSAddress[:strings.IndexByte(infra.DefaultKubernetesXDSAddress, ':')], "gatewire_readiness", "default/web/pod"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the kubernetes bootstrap lacks %s:\n%s", want, got)
		}
	}
	if _, err := infra.Bootstrap(cfg, "gatewire", "", proxy("Bad_NS", "web")); err == nil {
		t.Error("Bootstrap accepted a namespace that is not a DNS label")
	}
}
