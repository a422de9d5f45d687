package provider_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kelseyhightower/envconfig"
	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider"
	"github.com/gatewire/gatewire/services/provider/kube"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quickstart is the example folder, which the provider publishes by default.
const quickstart = "../../examples/quickstart"

// kubernetes returns a valid configuration of the kubernetes mode.
func kubernetes() provider.Config {
	return provider.Config{
		Mode: "kubernetes", LeaderElection: true, LeaseNamespace: "gatewire",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
	}
}

// with returns kubernetes() changed by fn.
func with(fn func(*provider.Config)) provider.Config {
	c := kubernetes()
	fn(&c)
	return c
}

// providerVariables are the provider's environment variables.
var providerVariables = []string{
	"GATEWIRE_PROVIDER_MODE", "GATEWIRE_PROVIDER_DIR", "GATEWIRE_PROVIDER_NAMESPACES",
	"GATEWIRE_CONTROLLER_NAME", "GATEWIRE_PROVIDER_CONTROLLER_NAME", "GATEWIRE_PROVIDER_LEADER_ELECTION",
	"GATEWIRE_PROVIDER_LEASE_NAME", "GATEWIRE_PROVIDER_LEASE_NAMESPACE", "GATEWIRE_PROVIDER_LEASE_DURATION",
	"GATEWIRE_PROVIDER_LEASE_RENEW_DEADLINE", "GATEWIRE_PROVIDER_LEASE_RETRY_PERIOD",
}

func TestConfigDefaultsAndEnvironment(t *testing.T) {
	for _, name := range providerVariables {
		t.Setenv(name, "") // restored when the test ends
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
	}
	var cfg provider.Config
	if err := envconfig.Process("GATEWIRE", &cfg); err != nil {
		t.Fatal(err)
	}
	want := kubernetes()
	want.Mode, want.Dir, want.LeaseNamespace, want.MaxFileBytes = "file", "examples/quickstart", "", 4<<20
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", cfg, want)
	}
	t.Setenv("GATEWIRE_PROVIDER_MODE", "kubernetes")
	t.Setenv("GATEWIRE_PROVIDER_DIR", "/srv/resources")
	t.Setenv("GATEWIRE_PROVIDER_NAMESPACES", "a,b")
	t.Setenv("GATEWIRE_PROVIDER_LEADER_ELECTION", "false")
	t.Setenv("GATEWIRE_PROVIDER_LEASE_DURATION", "4s")
	if err := envconfig.Process("GATEWIRE", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != "kubernetes" || cfg.Dir != "/srv/resources" || !slices.Equal(cfg.Namespaces, []string{"a", "b"}) ||
		cfg.LeaderElection || cfg.LeaseDuration != 4*time.Second {
		t.Errorf("from the environment: %+v", cfg)
	}
	if cfg.Controller() != gatewayclass.DefaultControllerName {
		t.Errorf("controller name %q, want the default", cfg.Controller())
	}
	t.Setenv("GATEWIRE_PROVIDER_CONTROLLER_NAME", "example.com/deprecated") // still read, as an alias
	if err := envconfig.Process("GATEWIRE", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Controller() != "example.com/deprecated" {
		t.Errorf("controller name %q from GATEWIRE_PROVIDER_CONTROLLER_NAME", cfg.Controller())
	}
	t.Setenv("GATEWIRE_CONTROLLER_NAME", "example.com/gatewire")
	if err := envconfig.Process("GATEWIRE", &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "GATEWIRE_PROVIDER_CONTROLLER_NAME") {
		t.Errorf("both variables, different: %v", err)
	}
}

func TestConfigValidateNamesTheVariable(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		cfg  provider.Config
		want string // prefix of the error; "" for none
	}{
		{provider.Config{Mode: "file", Dir: dir}, ""},
		{kubernetes(), ""},
		{with(func(c *provider.Config) { c.Namespaces = []string{"a", " b ", ""} }), ""},
		{with(func(c *provider.Config) { c.Namespaces = []string{"a", "B_"} }), `GATEWIRE_PROVIDER_NAMESPACES: "B_": `},
		{with(func(c *provider.Config) { c.ControllerName = "gatewire" }), `GATEWIRE_CONTROLLER_NAME: "gatewire" is not a domain-prefixed path`},
		{with(func(c *provider.Config) { c.DeprecatedControllerName = "gatewire" }), `GATEWIRE_PROVIDER_CONTROLLER_NAME: "gatewire" is not a domain-prefixed path`},
		{with(func(c *provider.Config) {
			c.ControllerName, c.DeprecatedControllerName = "example.com/a", "example.com/b"
		}),
			`GATEWIRE_CONTROLLER_NAME="example.com/a" and GATEWIRE_PROVIDER_CONTROLLER_NAME="example.com/b" differ`},
		{provider.Config{Mode: "file", Dir: dir, Config: gatewayclass.Config{ControllerName: "nope"}}, `GATEWIRE_CONTROLLER_NAME: "nope"`},
		{with(func(c *provider.Config) { c.LeaseName = "Lease" }), `GATEWIRE_PROVIDER_LEASE_NAME: "Lease": `},
		{with(func(c *provider.Config) { c.LeaseNamespace = "a.b" }), `GATEWIRE_PROVIDER_LEASE_NAMESPACE: "a.b": `},
		{with(func(c *provider.Config) { c.RetryPeriod = 0 }), "GATEWIRE_PROVIDER_LEASE_RETRY_PERIOD: 0s is not positive"},
		{with(func(c *provider.Config) { c.RenewDeadline = 2 * time.Second }), "GATEWIRE_PROVIDER_LEASE_RENEW_DEADLINE: 2s must exceed 1.2 × GATEWIRE_PROVIDER_LEASE_RETRY_PERIOD (2s)"},
		{with(func(c *provider.Config) { c.LeaseDuration = 10 * time.Second }), "GATEWIRE_PROVIDER_LEASE_DURATION: 10s must exceed GATEWIRE_PROVIDER_LEASE_RENEW_DEADLINE (10s)"},
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

func TestKubernetesModeOutsideAClusterNeedsALeaseNamespace(t *testing.T) {
	cfg := kubernetes()
	cfg.LeaseNamespace = ""
	_, err := provider.New(cfg, bustest.New(t), nil, provider.WithKubernetes(kube.Mode))
	if err == nil || !strings.HasPrefix(err.Error(), "GATEWIRE_PROVIDER_LEASE_NAMESPACE: empty, and not running in a cluster") {
		t.Errorf("New without a lease namespace: %v", err)
	}
}

// TestKubernetesModeNeedsIt checks that a provider built without the
// kubernetes mode (cmd/provider-file) says so when asked for it.
func TestKubernetesModeNeedsIt(t *testing.T) {
	_, err := provider.New(kubernetes(), bustest.New(t), nil)
	if err == nil || err.Error() != `GATEWIRE_PROVIDER_MODE: "kubernetes": this binary has the "file" mode only; run provider (or gatewire standalone), which has both` {
		t.Errorf("New in kubernetes mode without WithKubernetes: %v", err)
	}
	if _, err := provider.New(kubernetes(), bustest.New(t), nil, provider.WithKubernetes(nil)); err == nil {
		t.Error("WithKubernetes(nil): no error")
	}
}

// run runs s until the test ends, and fails the test if Run returns an
// error; the context is the one Run got.
func run(t *testing.T, s *provider.Service) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return ctx
}

func TestQuickstartIsPublished(t *testing.T) {
	b := bustest.New(t)
	s, err := provider.New(provider.Config{Mode: "file", Dir: quickstart}, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	run(t, s)
	testkit.Eventually(t, 10*time.Second, "the provider ready", s.Ready)
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
		bus.SyncKey("file"), // the provider's sync mark
	}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("keys:\n got %v\nwant %v", keys, want)
	}
}

// TestFileModeLogsStatusChanges checks that the file mode, which has no
// status subresource to write to, logs each change of the status bucket.
func TestFileModeLogsStatusChanges(t *testing.T) {
	b := bustest.New(t)
	var logs testkit.LogBuffer
	log := logs.Logger(slog.LevelDebug)
	s, err := provider.New(provider.Config{Mode: "file", Dir: quickstart}, b, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := run(t, s)
	key := bus.StatusKey("Gateway", "default", "quickstart", "default", "quickstart")
	if _, err := b.Put(ctx, bus.Status, key, &busv1.Status{
		Conditions: []*busv1.Condition{{Type: "Programmed", Status: "False", Reason: "Invalid"}},
	}); err != nil {
		t.Fatal(err)
	}
	want := `msg=status mode=file object="Gateway default/quickstart" key=` + key
	testkit.Eventually(t, 10*time.Second, "the log line "+want, func() bool { return strings.Contains(logs.String(), want) })
	if !strings.Contains(logs.String(), `conditions="Programmed=False(Invalid)"`) {
		t.Errorf("the status line does not summarize the conditions:\n%s", logs.String())
	}
}
