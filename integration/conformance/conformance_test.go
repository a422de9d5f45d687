package conformance

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/kubetest"
	"github.com/gatewire/gatewire/services/infra"
	infrakube "github.com/gatewire/gatewire/services/infra/kube"
	"github.com/gatewire/gatewire/services/provider"
	providerkube "github.com/gatewire/gatewire/services/provider/kube"
	"github.com/gatewire/gatewire/services/translator"
)

// className is the GatewayClass the suite's Gateways use.
const className = "gatewire-conformance"

// TestConformance runs the conformance tests of statusTests against
// gatewire, with every other test of the suite skipped.
func TestConformance(t *testing.T) {
	env := kubetest.New(t)
	c, err := env.Client()
	if err != nil {
		t.Fatal(err)
	}
	startGatewire(t, env, bustest.New(t))
	createClass(t, c)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		runStandInKubelet(ctx, c, func(err error) { t.Logf("stand-in kubelet: %v", err) })
	})
	t.Cleanup(func() { stop(); wg.Wait() })

	cs, err := clientset.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	conformance.RunConformanceWithOptions(t, suite.ConformanceOptions{
		ConfigurableOptions: suite.ConfigurableOptions{
			GatewayClassName:     className,
			CleanupBaseResources: false, // the API server goes with the test
			CleanupTestResources: true,  // later tests check the namespaces are ready
			SupportedFeatures:    supportedFeatures,
			SkipTests:            skippedTests(t),
			TimeoutConfig:        timeouts(),
		},
		Client: c,
		// The suite makes a client per test with these options: they need
		// the scheme with the Gateway API kinds.
		ClientOptions: client.Options{Scheme: env.Scheme},
		Clientset:     cs,
		RestConfig:    env.Config,
	})
	t.Logf("conformance tests took %s", time.Since(start).Round(time.Second))
}

// startGatewire runs the provider (kubernetes mode), the translator and the
// infra service (kubernetes mode, ClusterIP Services) on b until the test
// ends. The provider finds the API server as in a cluster: KUBECONFIG.
func startGatewire(t *testing.T, env *kubetest.Env, b *bus.Bus) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	prov, err := provider.New(provider.Config{
		Mode:          provider.ModeKubernetes,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
	}, b, log.With("service", "provider"), provider.WithKubernetes(providerkube.Mode))
	if err != nil {
		t.Fatal(err)
	}
	trans, err := translator.New(translator.DefaultConfig(), b, log.With("service", "translator"))
	if err != nil {
		t.Fatal(err)
	}
	inf, err := infra.New(infra.Config{
		Mode: infra.ModeKubernetes, AdminPort: 19000,
		Kubernetes: infra.Kubernetes{
			EnvoyImage: "envoyproxy/envoy:distroless-v1.36.2", Replicas: 1, ServiceType: "ClusterIP",
			ReadinessPort: 19001, CPURequest: "100m", MemoryRequest: "128Mi",
		},
		// The CA and the xds server's certificate, as in gatewire-system.
		TLS: infra.TLS{SecretsNamespace: "default"},
	}, b, log.With("service", "infra"), infra.WithKubernetes(infrakube.Connect(env.Config)))
	if err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for name, run := range map[string]func(context.Context) error{
		"provider": prov.Run, "translator": trans.Run, "infra": inf.Run,
	} {
		wg.Go(func() {
			if err := run(ctx); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	t.Cleanup(func() { stop(); wg.Wait() })
}

// createClass creates the GatewayClass of the suite, managed by gatewire.
func createClass(t *testing.T, c client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	class := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: className},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: gatewayclass.DefaultControllerName},
	}
	if err := c.Create(ctx, class); err != nil {
		t.Fatal(err)
	}
}
