package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/kubetest"
)

// firstConfigRoutes is the size of the file provider's first-config test.
const firstConfigRoutes = 3000

// firstConfigKubeRoutes is the size of the Kubernetes provider's: each
// tenant route has two Services, and envtest's API server allocates
// Service IPs from a /24, so 100 routes (200 Services) fit.
const firstConfigKubeRoutes = 100

// TestFirstConfig starts the four services as processes on a 3,000-route
// folder, with an ADS client of the gateway connected before any of them,
// and checks that the client's first configuration is the complete one
// and the only one; then that a provider killed and restarted while a
// route changes never makes the client see a configuration missing routes.
func TestFirstConfig(t *testing.T) {
	dir := t.TempDir()
	tenantFolder(t, dir, firstConfigRoutes)
	in := startServices(t, dir)
	checkFirstConfig(t, in, firstConfigRoutes)
	checkProviderRestart(t, in, firstConfigRoutes, func() {
		write(t, filepath.Join(dir, "routes", "r7.yaml"), editedRoute(7, "restart-edit"))
	})
}

// TestFirstConfigKubernetes is TestFirstConfig with the Kubernetes
// provider, on 100 routes created in the API server before the provider
// starts.
func TestFirstConfigKubernetes(t *testing.T) {
	kube := kubetest.New(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kube.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	docs = append(docs, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench\n", gatewaytest.GatewayClass(), gatewaytest.Gateway("bench", "eg"))
	createAll(t, c, docs)
	docs = docs[:0]
	for i := range firstConfigKubeRoutes {
		docs = append(docs, gatewaytest.TenantBackends("bench", i), gatewaytest.TenantRoute("bench", "eg", i))
	}
	began := time.Now()
	createAll(t, c, docs)
	t.Logf("created %d routes and their backends in %s", firstConfigKubeRoutes, time.Since(began).Round(time.Millisecond))

	in := startServices(t, "", "GATEWIRE_PROVIDER_MODE=kubernetes", "GATEWIRE_PROVIDER_LEADER_ELECTION=false", "KUBECONFIG="+kubeconfig)
	checkFirstConfig(t, in, firstConfigKubeRoutes)
	checkProviderRestart(t, in, firstConfigKubeRoutes, func() {
		patch := `[{"op": "replace", "path": "/spec/rules/0/filters/0/requestHeaderModifier/set/0/value", "value": "restart-edit"}]`
		r := &unstructured.Unstructured{}
		r.SetAPIVersion("gateway.networking.k8s.io/v1")
		r.SetKind("HTTPRoute")
		r.SetNamespace("bench")
		r.SetName("route-7")
		if err := c.Patch(context.Background(), r, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatalf("patch route-7: %v", err)
		}
	})
}

// checkFirstConfig waits for the complete configuration of n tenant routes
// at the recorder, then a few seconds more, and checks that the first
// response of every type was already complete and that no other came.
func checkFirstConfig(t *testing.T, in *installation, n int) {
	t.Helper()
	r := in.recorder
	seen := r.waitFor(t, 5*time.Minute, fmt.Sprintf("the configuration of %d routes", n), resource.RouteType, func() bool { return r.complete(n) })
	t.Logf("from the start of the services to the complete configuration: %s", seen.Sub(in.began).Round(time.Millisecond))
	time.Sleep(5 * time.Second) // a later, different configuration would come in this time
	want := map[string]response{
		resource.ListenerType: {resources: 1},
		resource.RouteType:    {resources: 1, vhosts: n},
		resource.ClusterType:  {resources: 2 * n},
		resource.EndpointType: {resources: 2 * n},
	}
	for typeURL, w := range want {
		got := r.seen(typeURL)
		if len(got) != 1 || got[0].resources != w.resources || got[0].vhosts != w.vhosts {
			t.Errorf("%s: want one response of %d resources (%d virtual hosts); got %s", typeURL, w.resources, w.vhosts, describe(got))
		}
	}
}

// checkProviderRestart kills the provider, calls change while it is down,
// starts it again, waits for the change to reach the recorder and checks
// that every response since the kill was complete.
func checkProviderRestart(t *testing.T, in *installation, n int, change func()) {
	t.Helper()
	r := in.recorder
	before := map[string]int{}
	for _, typeURL := range envoyTypes {
		before[typeURL] = len(r.seen(typeURL))
	}
	for _, p := range in.procs {
		if p.name == "provider" {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	change()
	restarted := time.Now()
	in.restart(t, "provider")
	seen := r.waitFor(t, 3*time.Minute, "the route changed while the provider was down", resource.RouteType, func() bool {
		return r.routesContain([]byte("restart-edit"))
	})
	t.Logf("from the provider's restart to the change at the client: %s", seen.Sub(restarted).Round(time.Millisecond))
	time.Sleep(3 * time.Second)
	for _, typeURL := range envoyTypes {
		for _, got := range r.seen(typeURL)[before[typeURL]:] {
			if !completeResponse(typeURL, got, n) {
				t.Errorf("%s after the provider's restart: a response of %d resources (%d virtual hosts), want every one complete; got %s",
					typeURL, got.resources, got.vhosts, describe(r.seen(typeURL)[before[typeURL]:]))
				break
			}
		}
	}
	if got := r.seen(resource.RouteType)[before[resource.RouteType]:]; len(got) == 0 || got[len(got)-1].vhosts != n {
		t.Errorf("routes after the provider's restart: want the last response of %d virtual hosts; got %s", n, describe(got))
	}
}

// completeResponse reports whether a response of typeURL holds all of n
// tenant routes: a listener, n virtual hosts, 2n clusters or endpoint
// assignments.
func completeResponse(typeURL string, r response, n int) bool {
	switch typeURL {
	case resource.RouteType:
		return r.vhosts == n
	case resource.ClusterType, resource.EndpointType:
		return r.resources == 2*n
	}
	return r.resources >= 1
}

func describe(rs []response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d responses:", len(rs))
	for _, r := range rs {
		fmt.Fprintf(&b, " [%d resources, %d vhosts]", r.resources, r.vhosts)
	}
	return b.String()
}

// createAll creates the objects of the YAML documents in docs (each may
// hold several, separated by "---" lines) with 16 concurrent requests.
func createAll(t *testing.T, c client.Client, docs []string) {
	t.Helper()
	objs := make(chan *unstructured.Unstructured)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range objs {
				if err := c.Create(context.Background(), u); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, doc := range docs {
		for _, part := range strings.Split("\n"+doc, "\n---\n") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(part), &u.Object); err != nil {
				t.Fatal(err)
			}
			objs <- u
		}
	}
	close(objs)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d objects not created, the first: %v", len(errs), errs[0])
	}
}
