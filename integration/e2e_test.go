package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

func TestMain(m *testing.M) {
	dir, err := build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		os.Exit(1)
	}
	binaries = dir
	goleak.VerifyTestMain(testkit.After(m, func() error { return os.RemoveAll(dir) }))
}

// gatewayYAML is the class and the Gateway shop/edge, with an HTTP
// listener "http" on port 8080.
var gatewayYAML = gatewaytest.GatewayClass() + gatewaytest.HTTPGateway("shop", "edge", "http", 8080)

const backendYAML = `apiVersion: v1
kind: Service
metadata:
  name: cart
  namespace: shop
spec:
  ports:
  - name: http
    port: 80
    targetPort: 8080
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: cart-1
  namespace: shop
  labels:
    kubernetes.io/service-name: cart
addressType: IPv4
ports:
- name: http
  port: 8080
endpoints:
- addresses: [10.1.0.1]
  conditions: {ready: true}
- addresses: [10.1.0.2]
  conditions: {ready: true}
- addresses: [10.1.0.3]
  conditions: {ready: true}
`

func routeYAML(prefix string) string {
	return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: cart
  namespace: shop
spec:
  parentRefs:
  - name: edge
  hostnames: [shop.example.com]
  rules:
  - matches:
    - path: {type: PathPrefix, value: ` + prefix + `}
    backendRefs:
    - name: cart
      port: 80
`
}

// routeTo reports the cluster that serves prefix on host, if any.
func routeTo(s snapshot, host, prefix string) string {
	for _, rc := range s.routes {
		for _, vh := range rc.GetVirtualHosts() {
			if !contains(vh.GetDomains(), host) {
				continue
			}
			for _, r := range vh.GetRoutes() {
				if r.GetMatch().GetPrefix() == strings.TrimSuffix(prefix, "/")+"/" {
					return clusterOf(r)
				}
			}
		}
	}
	return ""
}

func clusterOf(r *route.Route) string {
	if c := r.GetRoute().GetCluster(); c != "" {
		return c
	}
	if wc := r.GetRoute().GetWeightedClusters().GetClusters(); len(wc) == 1 {
		return wc[0].GetName()
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func endpointCount(s snapshot, clusterName string) int {
	n := 0
	for _, l := range s.endpoints[clusterName].GetEndpoints() {
		n += len(l.GetLbEndpoints())
	}
	return n
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestServicesAsProcesses runs a real nats-server and the four services as
// separate processes, and follows one Gateway from YAML files to an ADS
// client: created, edited, deleted.
func TestServicesAsProcesses(t *testing.T) {
	tmp := t.TempDir()
	resources, bootstraps := filepath.Join(tmp, "resources"), filepath.Join(tmp, "bootstrap")
	if err := os.MkdirAll(resources, 0o755); err != nil {
		t.Fatal(err)
	}
	natsAddr := freeAddr(t)
	host, port, _ := strings.Cut(natsAddr, ":")
	nats := start(t, "nats-server", nil, "-a", host, "-p", port, "-js", "-sd", filepath.Join(tmp, "nats"))
	waitListening(t, nats, natsAddr, 20*time.Second)

	xdsAddr := freeAddr(t)
	pki := newXDSPKI(t, tmp)
	common := []string{"GATEWIRE_NATS_URL=nats://" + natsAddr, "GATEWIRE_SYSTEM=it", "GATEWIRE_LOG_LEVEL=debug"}
	env := map[string][]string{
		"provider":   {"GATEWIRE_PROVIDER_DIR=" + resources},
		"translator": nil,
		"xds":        append(pki.xdsEnv(), "GATEWIRE_XDS_ADDRESS="+xdsAddr),
		"infra":      append(pki.infraEnv(), "GATEWIRE_INFRA_BOOTSTRAP_DIR="+bootstraps, "GATEWIRE_INFRA_XDS_ADDRESS="+xdsAddr),
	}
	var services []*proc
	for _, name := range []string{"provider", "translator", "xds", "infra"} {
		admin := freeAddr(t)
		p := start(t, name, append(append([]string{"GATEWIRE_ADMIN_ADDRESS=" + admin}, common...), env[name]...))
		waitReady(t, p, admin, 30*time.Second)
		services = append(services, p)
	}
	// A server that asks for no credentials: each service says so, once.
	for _, p := range services {
		if n := strings.Count(p.output(), "nats server asks for no credentials"); n != 1 {
			t.Errorf("%s warned %d times about a server without authorization, want once", p.name, n)
		}
	}

	envoy := connectEnvoyWith(t, xdsAddr, "shop/edge", pki.creds(t, "shop/edge"))
	write(t, filepath.Join(resources, "gateway.yaml"), gatewayYAML)
	write(t, filepath.Join(resources, "backend.yaml"), backendYAML)
	written := time.Now()
	write(t, filepath.Join(resources, "route.yaml"), routeYAML("/cart"))
	var cartCluster string
	seen := envoy.waitFor(t, 20*time.Second, "listener, route, cluster and endpoints of shop/edge", func(s snapshot) bool {
		cartCluster = routeTo(s, "shop.example.com", "/cart")
		return len(s.listeners) == 1 && cartCluster != "" && s.clusters[cartCluster] != nil && endpointCount(s, cartCluster) == 3
	})
	t.Logf("created: files to xDS in %s", seen.Sub(written).Round(time.Millisecond))
	checkBootstrap(t, filepath.Join(bootstraps, "shop-edge.yaml"), "shop/edge", xdsAddr)
	checkXDSAttacks(t, xdsAddr, pki.caDir)
	checkProxyStatus(t, "nats://"+natsAddr, "it", "shop/edge", "it-shop/edge")

	edited := time.Now()
	write(t, filepath.Join(resources, "route.yaml"), routeYAML("/basket"))
	seen = envoy.waitFor(t, 10*time.Second, "the edited route", func(s snapshot) bool {
		return routeTo(s, "shop.example.com", "/basket") == cartCluster && routeTo(s, "shop.example.com", "/cart") == ""
	})
	t.Logf("edited: file change to xDS update in %s", seen.Sub(edited).Round(time.Millisecond))

	removed := time.Now()
	if err := os.Remove(filepath.Join(resources, "route.yaml")); err != nil {
		t.Fatal(err)
	}
	seen = envoy.waitFor(t, 10*time.Second, "the route removed", func(s snapshot) bool {
		return routeTo(s, "shop.example.com", "/basket") == "" && s.clusters[cartCluster] == nil
	})
	t.Logf("deleted: file removal to xDS update in %s", seen.Sub(removed).Round(time.Millisecond))
}
