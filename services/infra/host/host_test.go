package host_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/host"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(fakeEnvoyEnv); dir != "" {
		os.Exit(fakeEnvoy(dir, os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

func newProvisioner(t *testing.T, opts host.Options) *host.Provisioner {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = filepath.Join(t.TempDir(), "bootstrap")
	}
	p, err := host.New(opts, testkit.TestLogger(t))
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func proxy(namespace, name string) *busv1.Proxy {
	return &busv1.Proxy{Namespace: namespace, Name: name, NodeCluster: namespace + "/" + name}
}

// readBootstrap reads a bootstrap file the way Envoy does (YAML to JSON to
// proto) and validates it.
func readBootstrap(t *testing.T, path string) *bootstrapv3.Bootstrap {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("%s: YAMLToJSON: %v", path, err)
	}
	b := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(raw, b); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("%s: ValidateAll: %v", path, err)
	}
	return b
}

func mtime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// ageFile sets the mtime of path an hour back, so that a rewrite shows.
func ageFile(t *testing.T, path string) time.Time {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return old
}

func TestApplyWritesBootstrap(t *testing.T) {
	ctx := context.Background()
	p := newProvisioner(t, host.Options{XDSAddress: "xds.example:18000", AdminPort: 19001})
	if err := p.Apply(ctx, proxy("team-a", "web.example")); err != nil {
		t.Fatal(err)
	}
	path := p.Path("team-a", "web.example")
	if filepath.Base(path) != "team-a-web.example.yaml" {
		t.Errorf("path = %s, want team-a-web.example.yaml", path)
	}
	b := readBootstrap(t, path)
	if got := b.GetNode().GetCluster(); got != "team-a/web.example" {
		t.Errorf("node.cluster = %q", got)
	}
	host, _ := os.Hostname()
	if got, want := b.GetNode().GetId(), "team-a/web.example/"+host; got != want {
		t.Errorf("node.id = %q, want %q", got, want)
	}
	if got := b.GetDynamicResources().GetAdsConfig().GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName(); got != bootstrap.XDSClusterName {
		t.Errorf("ads cluster = %q", got)
	}
	sa := b.GetStaticResources().GetClusters()[0].GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if sa.GetAddress() != "xds.example" || sa.GetPortValue() != 18000 {
		t.Errorf("xds address = %s:%d, want xds.example:18000", sa.GetAddress(), sa.GetPortValue())
	}
	if got := b.GetAdmin().GetAddress().GetSocketAddress().GetPortValue(); got != 19001 {
		t.Errorf("admin port = %d, want 19001", got)
	}
}

func TestApplyUnchangedKeepsFile(t *testing.T) {
	ctx := context.Background()
	p := newProvisioner(t, host.Options{})
	if err := p.Apply(ctx, proxy("default", "eg")); err != nil {
		t.Fatal(err)
	}
	path := p.Path("default", "eg")
	old := ageFile(t, path)
	changed := proxy("default", "eg")
	changed.Replicas = 3 // not part of the bootstrap
	if err := p.Apply(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if got := mtime(t, path); !got.Equal(old) {
		t.Errorf("unchanged bootstrap rewritten: mtime %v, want %v", got, old)
	}
	// An edited file is put back.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(data, "# edit\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	old = ageFile(t, path)
	if err := p.Apply(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if got := mtime(t, path); got.Equal(old) {
		t.Errorf("edited bootstrap not rewritten")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Errorf("rewritten bootstrap differs from the first one")
	}
}

func TestRemove(t *testing.T) {
	ctx := context.Background()
	p := newProvisioner(t, host.Options{})
	if err := p.Apply(ctx, proxy("default", "eg")); err != nil {
		t.Fatal(err)
	}
	if err := p.Remove(ctx, "default", "eg"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Path("default", "eg")); !os.IsNotExist(err) {
		t.Errorf("bootstrap still there: %v", err)
	}
	if err := p.Remove(ctx, "default", "eg"); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := newProvisioner(t, host.Options{Dir: dir})
	for _, gw := range []string{"keep", "gone"} {
		if err := p.Apply(ctx, proxy("default", gw)); err != nil {
			t.Fatal(err)
		}
	}
	foreign := filepath.Join(dir, "notes.yaml")
	leftover := filepath.Join(dir, ".gatewire-123.tmp")
	for _, f := range []string{foreign, leftover} {
		if err := os.WriteFile(f, []byte("a: b\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(namespace, name string) bool { return namespace == "default" && name == "keep" }
	if err := p.Prune(ctx, keep); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		p.Path("default", "keep"): true,
		p.Path("default", "gone"): false,
		foreign:                   true,
		leftover:                  false,
	} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", filepath.Base(path), err == nil, want)
		}
	}
}

// TestAmbiguousName checks that a-b/c and a/b-c, which share a file name, do
// not overwrite or remove each other's file.
func TestAmbiguousName(t *testing.T) {
	ctx := context.Background()
	p := newProvisioner(t, host.Options{})
	if err := p.Apply(ctx, proxy("a-b", "c")); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ctx, proxy("a", "b-c")); err == nil || !strings.Contains(err.Error(), "a-b/c") {
		t.Errorf("Apply of the second gateway: %v, want an error naming a-b/c", err)
	}
	if err := p.Remove(ctx, "a", "b-c"); err != nil {
		t.Fatal(err)
	}
	if got := readBootstrap(t, p.Path("a-b", "c")).GetNode().GetCluster(); got != "a-b/c" {
		t.Errorf("node.cluster = %q, want a-b/c", got)
	}
}

func TestRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	p := newProvisioner(t, host.Options{})
	for _, px := range []*busv1.Proxy{
		{Namespace: "default"},
		{Name: "eg"},
		{Namespace: "default", Name: "../eg"},
		{Namespace: "Default", Name: "eg"},
		{Namespace: "default", Name: "eg", NodeCluster: "eg"},
	} {
		if err := p.Apply(ctx, px); err == nil {
			t.Errorf("Apply(%v) = nil, want an error", px)
		}
	}
	if err := p.Remove(ctx, "", "x/y"); err == nil {
		t.Errorf("Remove of a bad name = nil, want an error")
	}
	entries, _ := os.ReadDir(filepath.Dir(p.Path("default", "eg")))
	if len(entries) != 0 {
		t.Errorf("files written for bad input: %v", entries)
	}
}

func TestNewRejects(t *testing.T) {
	for name, opts := range map[string]host.Options{
		"no dir":      {},
		"bad address": {Dir: t.TempDir(), XDSAddress: "nohost"},
	} {
		if _, err := host.New(opts, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
			t.Errorf("%s: New = nil error", name)
		}
	}
}

func TestRelativeDir(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	p := newProvisioner(t, host.Options{Dir: ".gatewire/bootstrap"})
	want := filepath.Join(cwd, ".gatewire", "bootstrap", "default-eg.yaml")
	if got := p.Path("default", "eg"); got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
}
