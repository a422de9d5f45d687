package infra_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(stopAPIServer{m})
}

func newBus(t *testing.T) *bus.Bus {
	t.Helper()
	return bustest.New(t)
}

func hostConfig(dir string) infra.Config {
	return infra.Config{Mode: "host", XDSAddress: "127.0.0.1:18000", AdminPort: 19000, BootstrapDir: dir}
}

// start runs a new Service until the test ends and waits until it is ready.
func start(t *testing.T, cfg infra.Config, b *bus.Bus, opts ...infra.Option) *infra.Service {
	t.Helper()
	s, err := infra.New(cfg, b, testkit.TestLogger(t), opts...)
	if err != nil {
		t.Fatalf("infra.New: %v", err)
	}
	run(t, s)
	return s
}

// run runs s until the test ends and waits until it is ready.
func run(t *testing.T, s *infra.Service) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
	testkit.Eventually(t, 10*time.Second, "service ready", s.Ready)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func put(t *testing.T, b *bus.Bus, key string, msg proto.Message) {
	t.Helper()
	if _, err := b.Put(context.Background(), bus.Infra, key, msg); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func proxy(namespace, name string) *busv1.Proxy {
	return &busv1.Proxy{Namespace: namespace, Name: name, NodeCluster: namespace + "/" + name}
}

// putProxy puts the proxy of a gateway under its key.
func putProxy(t *testing.T, b *bus.Bus, p *busv1.Proxy) {
	t.Helper()
	put(t, b, bus.GatewayKey(p.GetNamespace(), p.GetName()), p)
}

// readBootstrap reads a bootstrap file as Envoy does: YAML to JSON to proto.
func readBootstrap(t *testing.T, path string) *bootstrapv3.Bootstrap {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	bs := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(raw, bs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := bs.ValidateAll(); err != nil {
		t.Fatalf("%s: ValidateAll: %v", path, err)
	}
	return bs
}

func checkBootstrap(t *testing.T, path, cluster, xdsHost string, xdsPort uint32) {
	t.Helper()
	bs := readBootstrap(t, path)
	if got := bs.GetNode().GetCluster(); got != cluster {
		t.Errorf("node.cluster = %q, want %q", got, cluster)
	}
	ads := bs.GetDynamicResources().GetAdsConfig()
	if ads.GetApiType() != corev3.ApiConfigSource_GRPC || ads.GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName() != "xds_cluster" {
		t.Errorf("ads_config = %v", ads)
	}
	xds := bs.GetStaticResources().GetClusters()[0]
	sa := xds.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if xds.GetName() != "xds_cluster" || sa.GetAddress() != xdsHost || sa.GetPortValue() != xdsPort {
		t.Errorf("xds cluster %s at %s:%d, want xds_cluster at %s:%d", xds.GetName(), sa.GetAddress(), sa.GetPortValue(), xdsHost, xdsPort)
	}
}

func ageFile(t *testing.T, path string) time.Time {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return old
}

func mtime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

func TestHostMode(t *testing.T) {
	b := newBus(t)
	cfg := hostConfig(filepath.Join(t.TempDir(), "bootstrap"))
	cfg.XDSAddress = "xds.gatewire.svc:18001"
	s := start(t, cfg, b)
	path := s.BootstrapPath("default", "eg")
	if path != filepath.Join(cfg.BootstrapDir, "default-eg.yaml") {
		t.Errorf("BootstrapPath = %s", path)
	}

	putProxy(t, b, proxy("default", "eg"))
	testkit.Eventually(t, 10*time.Second, "bootstrap written", func() bool { return exists(path) })
	checkBootstrap(t, path, "default/eg", "xds.gatewire.svc", 18001)

	// An update that does not change the bootstrap does not rewrite it; a
	// later gateway's file shows that the update was handled.
	old := ageFile(t, path)
	update := proxy("default", "eg")
	update.Replicas = 2
	update.Ports = []*busv1.ProxyPort{{Name: "http", Protocol: "TCP", Port: 80, ContainerPort: 10080}}
	putProxy(t, b, update)
	putProxy(t, b, proxy("default", "marker"))
	testkit.Eventually(t, 10*time.Second, "second bootstrap written", func() bool { return exists(s.BootstrapPath("default", "marker")) })
	if got := mtime(t, path); !got.Equal(old) {
		t.Errorf("unchanged bootstrap rewritten at %v", got)
	}

	if err := b.Delete(context.Background(), bus.Infra, bus.GatewayKey("default", "eg")); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "bootstrap removed", func() bool { return !exists(path) })
	if !exists(s.BootstrapPath("default", "marker")) {
		t.Errorf("bootstrap of default/marker removed with default/eg")
	}
}

// TestHostModeBadInput checks that unusable entries are skipped and the
// service goes on.
func TestHostModeBadInput(t *testing.T) {
	b := newBus(t)
	dir := filepath.Join(t.TempDir(), "bootstrap")
	s := start(t, hostConfig(dir), b)
	put(t, b, bus.GatewayKey("default", "noname"), &busv1.Proxy{Namespace: "default"})
	put(t, b, bus.GatewayKey("default", "other"), proxy("default", "eg"))
	put(t, b, bus.GatewayKey("default", "member"), &busv1.Member{Id: "x"})
	put(t, b, bus.GatewayKey("default", "cluster"), &busv1.Proxy{Namespace: "default", Name: "cluster", NodeCluster: "x/y"})
	put(t, b, bus.GatewayKey("Default", "upper"), proxy("Default", "upper"))
	put(t, b, "nodots", proxy("default", "nodots"))
	putProxy(t, b, proxy("default", "good"))
	good := s.BootstrapPath("default", "good")
	testkit.Eventually(t, 10*time.Second, "good bootstrap written", func() bool { return exists(good) })
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"default-good.tls", "default-good.yaml"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want only %v (the good gateway's bootstrap and certificate folder)", names, want)
	}
}

// TestHostModeRestart checks that a restarted service removes the bootstrap
// of a gateway deleted while it was down, writes new ones and leaves the rest.
func TestHostModeRestart(t *testing.T) {
	b := newBus(t)
	dir := filepath.Join(t.TempDir(), "bootstrap")
	cfg := hostConfig(dir)
	first, err := infra.New(cfg, b, testkit.TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	putProxy(t, b, proxy("default", "stays"))
	putProxy(t, b, proxy("default", "goes"))
	testkit.Eventually(t, 10*time.Second, "bootstraps written", func() bool {
		return exists(first.BootstrapPath("default", "stays")) && exists(first.BootstrapPath("default", "goes"))
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}

	if err := b.Delete(context.Background(), bus.Infra, bus.GatewayKey("default", "goes")); err != nil {
		t.Fatal(err)
	}
	putProxy(t, b, proxy("default", "new"))
	foreign := filepath.Join(dir, "notes.yaml")
	if err := os.WriteFile(foreign, []byte("mine: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := ageFile(t, first.BootstrapPath("default", "stays"))

	second, err := infra.New(cfg, b, testkit.TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if second.Ready() {
		t.Errorf("Ready before Run")
	}
	run(t, second)
	for path, want := range map[string]bool{
		second.BootstrapPath("default", "stays"): true,
		second.BootstrapPath("default", "goes"):  false,
		second.BootstrapPath("default", "new"):   true,
		foreign:                                  true,
	} {
		if exists(path) != want {
			t.Errorf("%s: exists = %v, want %v", filepath.Base(path), !want, want)
		}
	}
	if got := mtime(t, second.BootstrapPath("default", "stays")); !got.Equal(old) {
		t.Errorf("unchanged bootstrap rewritten on restart")
	}
}

func TestNewRejects(t *testing.T) {
	b := newBus(t)
	if _, err := infra.New(infra.Config{Mode: "host"}, b, nil); err == nil {
		t.Errorf("New with an empty config: nil error")
	}
	if _, err := infra.New(hostConfig(t.TempDir()), nil, nil); err == nil {
		t.Errorf("New with a nil bus: %v", err)
	}
}
