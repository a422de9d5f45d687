package integration

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/services/translator"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// world is the folder of manifests the chaos test changes: gateways
// chaos/gw-<g>, each with routes gw<g>-r<i> (one file each) sending a path
// prefix to one or two of the gateway's Services gw<g>-s<j>, each Service
// and its EndpointSlice in a file of its own. Only the test goroutine uses
// it.
type world struct {
	dir      string
	rnd      *rand.Rand
	gateways int
	routes   int // per gateway; also the Services per gateway
	// The current content of every file, by its path under dir; "" for a
	// file that does not exist.
	files map[string]string
	// version numbers the changes, so that each one writes something new.
	version int
}

const chaosNamespace = "chaos"

func newWorld(dir string, seed uint64, gateways, routes int) *world {
	return &world{dir: dir, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), gateways: gateways, routes: routes, files: map[string]string{}}
}

// create writes the first version of every file.
func (w *world) create(t *testing.T) {
	t.Helper()
	var base strings.Builder
	base.WriteString(gatewaytest.GatewayClass())
	for g := range w.gateways {
		base.WriteString(gatewaytest.HTTPGateway(chaosNamespace, fmt.Sprintf("gw-%d", g), "http", 8080))
	}
	w.write(t, "base.yaml", base.String())
	for g := range w.gateways {
		for i := range w.routes {
			w.write(t, w.routeFile(g, i), w.route(g, i, fmt.Sprintf("/r%d", i), []int{i}, []int{1}))
			w.write(t, w.serviceFile(g, i), w.service(g, i, "http", false))
			w.write(t, w.sliceFile(g, i), w.slice(g, i, 2, 2))
		}
	}
}

func (w *world) routeFile(g, i int) string   { return fmt.Sprintf("routes/gw%d-r%d.yaml", g, i) }
func (w *world) serviceFile(g, i int) string { return fmt.Sprintf("services/gw%d-s%d.yaml", g, i) }
func (w *world) sliceFile(g, i int) string   { return fmt.Sprintf("slices/gw%d-s%d.yaml", g, i) }

// route sends prefix on its own hostname to the gateway's Services of
// indexes backends, with weights.
func (w *world) route(g, i int, prefix string, backends, weights []int) string {
	var refs []string
	for k, b := range backends {
		refs = append(refs, fmt.Sprintf("{name: gw%d-s%d, port: 80, weight: %d}", g, b, weights[k]))
	}
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gw%[1]d-r%[2]d, namespace: %[3]s}
spec:
  parentRefs: [{name: gw-%[1]d}]
  hostnames: [r%[2]d.gw-%[1]d.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: %[4]s}}]
    backendRefs: [%[5]s]
`, g, i, chaosNamespace, prefix, strings.Join(refs, ", "))
}

// service has one port named portName; h2c sets its appProtocol.
func (w *world) service(g, i int, portName string, h2c bool) string {
	app := ""
	if h2c {
		app = ", appProtocol: kubernetes.io/h2c"
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: gw%[1]d-s%[2]d, namespace: %[3]s}
spec:
  ports: [{name: %[4]s, port: 80, targetPort: 8080%[5]s}]
`, g, i, chaosNamespace, portName, app)
}

// slice has n endpoints on the port named http, of which the first ready
// are ready; their addresses change with the version.
func (w *world) slice(g, i, n, ready int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: gw%[1]d-s%[2]d-1
  namespace: %[3]s
  labels: {kubernetes.io/service-name: gw%[1]d-s%[2]d}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
`, g, i, chaosNamespace)
	if n == 0 {
		return strings.TrimSuffix(b.String(), "endpoints:\n") + "endpoints: []\n"
	}
	for k := range n {
		fmt.Fprintf(&b, "- addresses: [10.%d.%d.%d]\n  conditions: {ready: %v}\n", g, i, (w.version+k)%250+1, k < ready)
	}
	return b.String()
}

// write sets a file's content ("" removes it) the way an editor or a
// ConfigMap volume would: a new file renamed into place.
func (w *world) write(t *testing.T, name, content string) {
	t.Helper()
	path := filepath.Join(w.dir, name)
	w.files[name] = content
	if content == "" {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// touch gives a random route of gateway g a new prefix (and brings it
// back if it was removed).
func (w *world) touch(t *testing.T, g int) {
	t.Helper()
	w.version++
	i := w.rnd.IntN(w.routes)
	w.write(t, w.routeFile(g, i), w.route(g, i, fmt.Sprintf("/v%d", w.version), []int{i}, []int{1}))
}

// change makes one random change: a route (four in ten, one in ten of
// them removing or bringing back the route), a Service (two in ten) or an
// EndpointSlice (four in ten). It returns what it changed.
func (w *world) change(t *testing.T) string {
	t.Helper()
	w.version++
	g, i := w.rnd.IntN(w.gateways), w.rnd.IntN(w.routes)
	switch r := w.rnd.IntN(10); {
	case r < 4:
		name := w.routeFile(g, i)
		if w.rnd.IntN(10) == 0 && w.files[name] != "" {
			w.write(t, name, "")
			return "remove " + name
		}
		backends := []int{w.rnd.IntN(w.routes)}
		weights := []int{1 + w.rnd.IntN(100)}
		if w.rnd.IntN(2) == 0 {
			backends = append(backends, (backends[0]+1)%w.routes)
			weights = append(weights, 1+w.rnd.IntN(100))
		}
		w.write(t, name, w.route(g, i, fmt.Sprintf("/v%d", w.version), backends, weights))
		return "route " + name
	case r < 6:
		port := []string{"http", "web"}[w.rnd.IntN(4)/3] // mostly http: web matches no endpoints
		w.write(t, w.serviceFile(g, i), w.service(g, i, port, w.rnd.IntN(2) == 0))
		return "service " + w.serviceFile(g, i)
	default:
		n := w.rnd.IntN(5)
		w.write(t, w.sliceFile(g, i), w.slice(g, i, n, w.rnd.IntN(n+1)))
		return "slice " + w.sliceFile(g, i)
	}
}

// expected translates the files as they are now, offline, and returns the
// xDS resources of every gateway by node cluster, type URL and name.
func (w *world) expected(t *testing.T) map[string]map[string]map[string]proto.Message {
	t.Helper()
	names := make([]string, 0, len(w.files))
	for name, content := range w.files {
		if content != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var all strings.Builder
	for _, name := range names {
		all.WriteString("---\n" + w.files[name])
	}
	idx, err := resourcestest.Load(strings.NewReader(all.String()), "chaos")
	if err != nil {
		t.Fatalf("offline translation: %v", err)
	}
	out := map[string]map[string]map[string]proto.Message{}
	for g := range w.gateways {
		gw := types.NamespacedName{Namespace: chaosNamespace, Name: fmt.Sprintf("gw-%d", g)}
		o := translator.Translate(idx, gatewayclass.DefaultControllerName, gw)
		if o == nil || o.XDS == nil {
			t.Fatalf("offline translation of %s: no xDS (%v)", gw, o.XDSError)
		}
		byType := map[string]map[string]proto.Message{}
		for _, typed := range o.XDS.GetResources() {
			byName := map[string]proto.Message{}
			for _, a := range typed.GetResources() {
				m, err := a.UnmarshalNew()
				if err != nil {
					t.Fatal(err)
				}
				byName[cache.GetResourceName(m)] = m
			}
			byType[typed.GetTypeUrl()] = byName
		}
		out[o.XDS.GetNodeCluster()] = byType
	}
	return out
}
