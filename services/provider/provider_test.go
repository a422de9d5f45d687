package provider_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kelseyhightower/envconfig"
	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/services/provider"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quickstart is the example folder, which the provider publishes by default.
const quickstart = "../../examples/quickstart"

func TestConfigDefaultsAndEnvironment(t *testing.T) {
	for _, name := range []string{"GATEWIRE_PROVIDER_MODE", "GATEWIRE_PROVIDER_DIR"} {
		t.Setenv(name, "") // restored when the test ends
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
	}
	var cfg provider.Config
	if err := envconfig.Process("GATEWIRE", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != "file" || cfg.Dir != "examples/quickstart" {
		t.Errorf("defaults: %+v", cfg)
	}
	t.Setenv("GATEWIRE_PROVIDER_MODE", "kubernetes")
	t.Setenv("GATEWIRE_PROVIDER_DIR", "/srv/resources")
	if err := envconfig.Process("GATEWIRE", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != "kubernetes" || cfg.Dir != "/srv/resources" {
		t.Errorf("from the environment: %+v", cfg)
	}
}

func TestConfigValidateNamesTheVariable(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		cfg  provider.Config
		want string // prefix of the error; "" for none
	}{
		{provider.Config{Mode: "file", Dir: dir}, ""},
		{provider.Config{Mode: "kubernetes"}, ""},
		{provider.Config{Mode: "files", Dir: dir}, `GATEWIRE_PROVIDER_MODE: "files" is not a mode`},
		{provider.Config{Mode: "file", Dir: ""}, "GATEWIRE_PROVIDER_DIR: empty"},
		{provider.Config{Mode: "file", Dir: filepath.Join(dir, "missing")}, "GATEWIRE_PROVIDER_DIR: stat " + filepath.Join(dir, "missing")},
		{provider.Config{Mode: "file", Dir: filepath.Join(quickstart, "gateway.yaml")}, "GATEWIRE_PROVIDER_DIR: ../../examples/quickstart/gateway.yaml is not a folder"},
	} {
		err := tc.cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want one starting with %q", tc.cfg, err, tc.want)
		}
	}
}

func TestKubernetesModeIsNotImplementedYet(t *testing.T) {
	_, err := provider.New(provider.Config{Mode: "kubernetes"}, bustest.New(t), nil)
	if !errors.Is(err, provider.ErrNotImplemented) || !strings.HasPrefix(err.Error(), "GATEWIRE_PROVIDER_MODE: ") {
		t.Errorf("New in kubernetes mode: %v; want ErrNotImplemented naming the variable", err)
	}
}

func TestQuickstartIsPublished(t *testing.T) {
	b := bustest.New(t)
	s, err := provider.New(provider.Config{Mode: "file", Dir: quickstart}, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); !s.Ready(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not ready after 10s")
		}
	}
	if p := s.Problems(); len(p) != 0 {
		t.Errorf("the quickstart has problems: %v", p)
	}
	keys, err := b.Keys(context.Background(), bus.Resources, ">")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	want := []string{
		bus.ResourceKey("EndpointSlice", "default", "backend-1"),
		bus.ResourceKey("Gateway", "default", "quickstart"),
		bus.ResourceKey("GatewayClass", "", "gatewire"),
		bus.ResourceKey("HTTPRoute", "default", "backend"),
		bus.ResourceKey("Service", "default", "backend"),
	}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("keys:\n got %v\nwant %v", keys, want)
	}
}
