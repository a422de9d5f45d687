package file_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

const gatewayDoc = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: quickstart
spec:
  gatewayClassName: gatewire
  listeners:
  - name: http
    protocol: HTTP
    port: 8080
status:
  conditions: []
`

// routeDoc is an HTTPRoute for the given hostname.
func routeDoc(name, hostname string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: %s
spec:
  parentRefs: [{name: quickstart}]
  hostnames: [%q]
  rules:
  - backendRefs: [{name: backend, port: 3000}]
`, name, hostname)
}

const serviceDoc = `apiVersion: v1
kind: Service
metadata:
  name: backend
  namespace: apps
spec:
  ports: [{port: 3000}]
`

var (
	gatewayKey = bus.ResourceKey("Gateway", "default", "quickstart")
	routeKey   = bus.ResourceKey("HTTPRoute", "default", "backend")
	serviceKey = bus.ResourceKey("Service", "apps", "backend")
)

func TestInitialPublishOfMultiDocumentFile(t *testing.T) {
	e := newEnv(t)
	e.write("all.yaml", "# the quickstart\n---\n"+gatewayDoc+"---\n"+routeDoc("backend", "www.example.com")+"---\n"+serviceDoc)
	e.start()

	gw, _ := e.get(gatewayKey)
	if gw == nil {
		t.Fatalf("no %s; keys: %v", gatewayKey, e.keys())
	}
	want := &busv1.Resource{
		Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway",
		Namespace: "default", Name: "quickstart", Uid: manifest.UID("Gateway", "default", "quickstart"),
		Generation: 1, Origin: "file:" + e.path("all.yaml") + ":3",
	}
	if gw.Group != want.Group || gw.Version != want.Version || gw.Kind != want.Kind ||
		gw.Namespace != want.Namespace || gw.Name != want.Name || gw.Uid != want.Uid ||
		gw.Generation != want.Generation || gw.Origin != want.Origin || gw.ResourceVersion == "" {
		t.Errorf("Gateway resource:\n got %v\nwant %v (and a resourceVersion)", gw, want)
	}
	obj := object(t, gw)
	if obj["status"] != nil {
		t.Errorf("status was not stripped: %v", obj["status"])
	}
	for path, want := range map[string]any{
		"metadata.namespace": "default", "metadata.uid": gw.Uid, "metadata.generation": float64(1),
		"metadata.resourceVersion": gw.ResourceVersion, "metadata.creationTimestamp": manifest.Epoch,
		"spec.gatewayClassName": "gatewire",
	} {
		if got := field(obj, strings.Split(path, ".")...); got != want {
			t.Errorf("Gateway object %s = %v, want %v", path, got, want)
		}
	}
	route, _ := e.get(routeKey)
	svc, _ := e.get(serviceKey)
	if route == nil || svc == nil {
		t.Fatalf("route %v, service %v; keys %v", route, svc, e.keys())
	}
	if route.Origin != "file:"+e.path("all.yaml")+":16" || svc.Origin != "file:"+e.path("all.yaml")+":26" {
		t.Errorf("origins %q and %q do not name the document lines 16 and 26", route.Origin, svc.Origin)
	}
	if len(e.keys()) != 3 {
		t.Errorf("keys %v, want the 3 objects of the file", e.keys())
	}
	if len(e.p.Problems()) != 0 {
		t.Errorf("problems: %v", e.p.Problems())
	}
}

func TestEditedRouteIsRepublishedAlone(t *testing.T) {
	e := newEnv(t)
	e.write("gateway.yaml", gatewayDoc)
	e.write("route.yaml", routeDoc("backend", "www.example.com"))
	e.start()
	_, gwRev := e.get(gatewayKey)
	before, _ := e.get(routeKey)

	e.write("route.yaml", routeDoc("backend", "api.example.com"))
	e.eventually(contract, "the route has the new hostname", func() bool {
		r, _ := e.get(routeKey)
		return r != nil && strings.Contains(string(r.Object), "api.example.com")
	})
	after, _ := e.get(routeKey)
	if after.Generation != 2 || after.ResourceVersion == before.ResourceVersion || after.Uid != before.Uid {
		t.Errorf("after a spec change: generation %d (want 2), resourceVersion %q (was %q), uid %q (was %q)",
			after.Generation, after.ResourceVersion, before.ResourceVersion, after.Uid, before.Uid)
	}
	if _, rev := e.get(gatewayKey); rev != gwRev {
		t.Errorf("the unchanged Gateway was written again: revision %d, was %d", rev, gwRev)
	}

	// A change of metadata only republishes without a new generation.
	e.write("route.yaml", strings.Replace(routeDoc("backend", "api.example.com"), "metadata:\n", "metadata:\n  labels: {team: a}\n", 1))
	e.eventually(contract, "the route has its label", func() bool {
		r, _ := e.get(routeKey)
		return r != nil && strings.Contains(string(r.Object), `"team":"a"`)
	})
	if r, _ := e.get(routeKey); r.Generation != 2 {
		t.Errorf("a label change moved the generation to %d, want 2", r.Generation)
	}
}

func TestObjectRemovedFromFileIsDeleted(t *testing.T) {
	e := newEnv(t)
	e.write("all.yaml", gatewayDoc+"---\n"+routeDoc("backend", "www.example.com"))
	e.start()
	if r, _ := e.get(routeKey); r == nil {
		t.Fatalf("no route; keys %v", e.keys())
	}

	e.write("all.yaml", gatewayDoc)
	// A file that loses objects must keep its content for a second first
	// (it could be caught mid-write).
	e.eventually(contract+time.Second, "the route key is deleted", func() bool { r, _ := e.get(routeKey); return r == nil })
	if g, _ := e.get(gatewayKey); g == nil {
		t.Error("the Gateway left in the file was deleted")
	}
}

func TestRemovedFileIsDeleted(t *testing.T) {
	e := newEnv(t)
	e.write("gateway.yaml", gatewayDoc)
	e.write("sub/route.yml", routeDoc("backend", "www.example.com"))
	e.start()
	if r, _ := e.get(routeKey); r == nil {
		t.Fatalf("the route of a subfolder was not published; keys %v", e.keys())
	}

	if err := os.Remove(e.path("sub/route.yml")); err != nil {
		t.Fatal(err)
	}
	e.eventually(contract, "the route key is deleted", func() bool { r, _ := e.get(routeKey); return r == nil })
	if err := os.Remove(e.path("gateway.yaml")); err != nil {
		t.Fatal(err)
	}
	e.eventually(contract, "the bucket is empty", func() bool { return len(e.keys()) == 0 })
}

func TestNewSubfolderIsFollowed(t *testing.T) {
	e := newEnv(t)
	e.write("gateway.yaml", gatewayDoc)
	e.start()

	e.write("teams/a/route.yaml", routeDoc("backend", "www.example.com"))
	e.eventually(contract, "the route of a new subfolder is published", func() bool { r, _ := e.get(routeKey); return r != nil })
	e.write("teams/a/service.json", `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "backend", "namespace": "apps"}, "spec": {"ports": [{"port": 80}]}}`)
	e.eventually(contract, "a file added to the subfolder later is published", func() bool { s, _ := e.get(serviceKey); return s != nil })

	if err := os.RemoveAll(e.path("teams")); err != nil {
		t.Fatal(err)
	}
	e.eventually(contract, "the objects of the removed subfolder are deleted", func() bool { return len(e.keys()) == 1 })
}

// TestConfigMapVolumeSwap follows a folder laid out as Kubernetes mounts a
// ConfigMap: the files are links through "..data", a link that is swapped
// atomically to a new hidden folder on every update.
func TestConfigMapVolumeSwap(t *testing.T) {
	e := newEnv(t)
	e.write("..v1/route.yaml", routeDoc("backend", "www.example.com"))
	must(t, os.Symlink("..v1", e.path("..data")))
	must(t, os.Symlink(filepath.Join("..data", "route.yaml"), e.path("route.yaml")))
	e.start()
	if r, _ := e.get(routeKey); r == nil || r.Origin != "file:"+e.path("route.yaml")+":1" {
		t.Fatalf("the route is not published once, through its link: %v; keys %v", r, e.keys())
	}

	e.write("..v2/route.yaml", routeDoc("backend", "api.example.com"))
	must(t, os.Symlink("..v2", e.path("..data_tmp")))
	must(t, os.Rename(e.path("..data_tmp"), e.path("..data")))
	must(t, os.RemoveAll(e.path("..v1")))
	e.eventually(contract, "the route of the new ConfigMap version is published", func() bool {
		r, _ := e.get(routeKey)
		return r != nil && strings.Contains(string(r.Object), "api.example.com")
	})
	if len(e.keys()) != 1 {
		t.Errorf("keys %v, want the route alone", e.keys())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
