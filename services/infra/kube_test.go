package infra_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/kubetest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra"
	"github.com/gatewire/gatewire/services/infra/kube"
)

// The API server of the package's tests, started by the first test that
// needs it and stopped by TestMain: the host-mode tests do not need one.
var (
	apiOnce sync.Once
	apiEnv  *kubetest.Env
	apiErr  error
)

// apiServer returns the package's API server, starting it on first use; it
// fails t with what to do when it cannot start (`make envtest-assets`).
func apiServer(t *testing.T) *kubetest.Env {
	t.Helper()
	apiOnce.Do(func() { apiEnv, apiErr = kubetest.Start() })
	if apiErr != nil {
		t.Fatalf("kubernetes mode tests need a kube-apiserver: %v", apiErr)
	}
	return apiEnv
}

// stopAPIServer runs m, then stops the API server if a test started it.
type stopAPIServer struct{ m *testing.M }

func (s stopAPIServer) Run() int {
	code := s.m.Run()
	if apiEnv != nil {
		if err := apiEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	return code
}

// waitTimeout bounds waits on the API server, which is slower than files.
const waitTimeout = 30 * time.Second

// kubeTest is one test's view of the API server: an admin client and a
// namespace of its own.
type kubeTest struct {
	t      *testing.T
	env    *kubetest.Env
	c      client.Client
	ns     string
	ctx    context.Context
	config *rest.Config
	log    *slog.Logger // nil: testLogger
}

func newKubeTest(t *testing.T) *kubeTest {
	t.Helper()
	env := apiServer(t)
	c, err := env.Client()
	if err != nil {
		t.Fatal(err)
	}
	return &kubeTest{t: t, env: env, c: c, ns: env.Namespace(t, "infra"), ctx: t.Context(), config: env.Config}
}

// kubeConfig is a kubernetes-mode config without leader election.
func kubeConfig() infra.Config {
	return infra.Config{Mode: "kubernetes", AdminPort: 19000, Kubernetes: infra.Kubernetes{
		EnvoyImage: "envoyproxy/envoy:distroless-v1.36.2", Replicas: 1, ServiceType: "LoadBalancer",
		ReadinessPort: 19001, CPURequest: "100m", MemoryRequest: "128Mi",
	}}
}

// startKube runs a kubernetes-mode Service with the admin's credentials
// until the test ends and waits until it is ready.
func (k *kubeTest) startKube(cfg infra.Config, b *bus.Bus) *infra.Service {
	k.t.Helper()
	s, _ := k.startKubeAs(cfg, b, k.config)
	return s
}

// startKubeAs runs a kubernetes-mode Service that connects with rc and waits
// until it is ready. stop stops it and waits for Run to return; it also runs
// when the test ends.
func (k *kubeTest) startKubeAs(cfg infra.Config, b *bus.Bus, rc *rest.Config) (s *infra.Service, stop func()) {
	k.t.Helper()
	log := k.log
	if log == nil {
		log = testkit.TestLogger(k.t)
	}
	if cfg.SecretsNamespace == "" {
		cfg.SecretsNamespace = k.ns // the CA and the xds server's Secrets
	}
	s, err := infra.New(cfg, b, log, infra.WithKubernetes(kube.Connect(rc)))
	if err != nil {
		k.t.Fatalf("infra.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			k.t.Errorf("Run = %v, want nil", err)
		}
	})
	k.t.Cleanup(stop)
	testkit.Eventually(k.t, waitTimeout, "service ready", s.Ready)
	return s, stop
}

// objects are the four objects of a gateway.
type objects struct {
	sa  corev1.ServiceAccount
	cm  corev1.ConfigMap
	dep appsv1.Deployment
	svc corev1.Service
}

// get reads the objects named name in namespace ns; it reports how many
// exist.
func (k *kubeTest) get(ns, name string) (*objects, int) {
	k.t.Helper()
	var o objects
	n := 0
	for _, obj := range []client.Object{&o.sa, &o.cm, &o.dep, &o.svc} {
		err := k.c.Get(k.ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		switch {
		case err == nil:
			n++
		case !apierrors.IsNotFound(err):
			k.t.Fatalf("get %T %s/%s: %v", obj, ns, name, err)
		}
	}
	return &o, n
}

// waitObjects waits until the four objects exist and cond holds for them.
func (k *kubeTest) waitObjects(ns, name, what string, cond func(*objects) bool) *objects {
	k.t.Helper()
	var o *objects
	testkit.Eventually(k.t, waitTimeout, what, func() bool {
		var n int
		o, n = k.get(ns, name)
		return n == 4 && (cond == nil || cond(o))
	})
	return o
}

// waitGone waits until none of the four objects exists.
func (k *kubeTest) waitGone(ns, name string) {
	k.t.Helper()
	testkit.Eventually(k.t, waitTimeout, "objects of "+ns+"/"+name+" removed", func() bool {
		_, n := k.get(ns, name)
		return n == 0
	})
}

// gateway creates a Gateway and returns it, so that owner references have a
// real uid.
func (k *kubeTest) gateway(name string) *gatewayv1.Gateway {
	k.t.Helper()
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: name},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "gatewire",
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
	if err := k.c.Create(k.ctx, gw); err != nil {
		k.t.Fatalf("create Gateway: %v", err)
	}
	return gw
}

// kubeProxy is the proxy of gateway ns/name with one HTTP port 80 bound on
// 10080.
func kubeProxy(ns, name string) *busv1.Proxy {
	p := proxy(ns, name)
	p.Ports = []*busv1.ProxyPort{{Name: "http", Protocol: "TCP", Port: 80, ContainerPort: 10080}}
	return p
}

func deleteKey(t *testing.T, b *bus.Bus, ns, name string) {
	t.Helper()
	if err := b.Delete(context.Background(), bus.Infra, bus.GatewayKey(ns, name)); err != nil {
		t.Fatal(err)
	}
}

// statusAddresses returns the addresses of the infra status entry of a
// gateway; nil when there is no entry.
func statusAddresses(t *testing.T, b *bus.Bus, ns, name string) []string {
	t.Helper()
	e, err := b.Get(context.Background(), bus.Status, infra.StatusKey(ns, name))
	if errors.Is(err, bus.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("get status: %v", err)
	}
	st, ok := e.Value.(*busv1.Status)
	if !ok {
		t.Fatalf("status entry is a %T", e.Value)
	}
	return st.GetAddresses()
}
