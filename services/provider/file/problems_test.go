package file_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/file"
)

// typoGateway is gatewayDoc with spec.listeners misspelt on line 7.
var typoGateway = strings.Replace(gatewayDoc, "  listeners:", "  listners:", 1)

// problemText returns the problems of the env as text.
func (e *env) problemText() string {
	var b strings.Builder
	for _, p := range e.p.Problems() {
		b.WriteString(p.Error() + "\n")
	}
	return b.String()
}

// errorLogged reports whether an error was logged for path and line.
func (e *env) errorLogged(path string, line int, contains string) bool {
	for _, l := range e.logs.JSONLines("") {
		if l["level"] == "ERROR" && l["path"] == path && l["line"] == float64(line) &&
			strings.Contains(fmt.Sprint(l["error"]), contains) {
			return true
		}
	}
	return false
}

func TestBrokenFileKeepsLastGoodContent(t *testing.T) {
	e := newEnv(t)
	e.write("gateway.yaml", gatewayDoc)
	e.write("route.yaml", routeDoc("backend", "www.example.com"))
	e.start()
	good, goodRev := e.get(gatewayKey)

	e.write("gateway.yaml", typoGateway)
	wantProblem := e.path("gateway.yaml") + `:7: Gateway "quickstart": unknown field "spec.listners"`
	e.eventually(contract, "the problem is reported", func() bool { return strings.Contains(e.problemText(), wantProblem) })
	if !e.errorLogged(e.path("gateway.yaml"), 7, `unknown field "spec.listners"`) {
		t.Errorf("no error log line with path, line 7 and the error; logs: %v", e.logs.JSONLines(""))
	}
	if got, rev := e.get(gatewayKey); got == nil || rev != goodRev || string(got.Object) != string(good.Object) {
		t.Errorf("the last good Gateway was not kept: %v (revision %d, was %d)", got, rev, goodRev)
	}
	if r, _ := e.get(routeKey); r == nil {
		t.Error("the route of another file was disturbed")
	}

	// A syntax error is reported too, still keeping the last good content.
	e.write("gateway.yaml", gatewayDoc+"  bad: [\n")
	e.eventually(contract, "the syntax error is reported", func() bool {
		return strings.HasPrefix(e.problemText(), e.path("gateway.yaml")+":13: did not find expected node content")
	})
	if _, rev := e.get(gatewayKey); rev != goodRev {
		t.Errorf("the Gateway was rewritten after a syntax error")
	}

	// Fixing the file clears the problem and publishes the new content.
	e.write("gateway.yaml", strings.Replace(gatewayDoc, "8080", "8081", 1))
	e.eventually(contract, "the fixed Gateway is published", func() bool {
		g, _ := e.get(gatewayKey)
		return g != nil && strings.Contains(string(g.Object), "8081")
	})
	if text := e.problemText(); text != "" {
		t.Errorf("problems left after the fix: %s", text)
	}
}

func TestBrokenFileAtStartIsReportedOthersPublish(t *testing.T) {
	e := newEnv(t)
	e.write("gateway.yaml", typoGateway)
	e.write("route.yaml", routeDoc("backend", "www.example.com"))
	e.write("unknown.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: envoy\n")
	e.start()

	if r, _ := e.get(routeKey); r == nil {
		t.Errorf("the good file was not published; keys %v", e.keys())
	}
	if g, _ := e.get(gatewayKey); g != nil {
		t.Errorf("the broken Gateway was published: %v", g)
	}
	text := e.problemText()
	for _, want := range []string{
		e.path("gateway.yaml") + `:7: Gateway "quickstart": unknown field "spec.listners"`,
		e.path("unknown.yaml") + `:2: unknown kind "Deployment"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("problems do not hold %q:\n%s", want, text)
		}
	}
	if !e.errorLogged(e.path("unknown.yaml"), 2, `unknown kind "Deployment"`) {
		t.Errorf("the unknown kind was not logged with path and line")
	}
}

func TestResyncRemovesStaleKeys(t *testing.T) {
	e := newEnv(t)
	e.write("gateway.yaml", gatewayDoc)
	e.write("route.yaml", routeDoc("backend", "www.example.com"))
	// A first run publishes the folder, as a previous process would have.
	stop := e.start()
	_, gwRev := e.get(gatewayKey)
	route, _ := e.get(routeKey)
	stop()

	// While no provider runs: a stale file object, a Kubernetes object, and
	// an edited route.
	stale := bus.ResourceKey("HTTPRoute", "default", "gone")
	e.put(stale, &busv1.Resource{Kind: "HTTPRoute", Namespace: "default", Name: "gone", Origin: "file:/old/gone.yaml:1"})
	kube := bus.ResourceKey("Service", "default", "from-cluster")
	e.put(kube, &busv1.Resource{Kind: "Service", Namespace: "default", Name: "from-cluster", Origin: "kubernetes"})
	e.write("route.yaml", routeDoc("backend", "api.example.com"))

	e.start()
	keys := e.keys()
	if keys[stale] || !keys[kube] {
		t.Errorf("after resync: stale key kept %v, Kubernetes key kept %v; want false, true", keys[stale], keys[kube])
	}
	if _, rev := e.get(gatewayKey); rev != gwRev {
		t.Errorf("the unchanged Gateway was rewritten on resync")
	}
	if r, _ := e.get(routeKey); r.Generation != route.Generation+1 || !strings.Contains(string(r.Object), "api.example.com") {
		t.Errorf("the route edited while stopped has generation %d (want %d): %s", r.Generation, route.Generation+1, r.Object)
	}
}

func TestRenameIntoPlaceAndRecreate(t *testing.T) {
	e := newEnv(t)
	e.write("gateway.yaml", gatewayDoc)
	e.start()

	// An editor writes a temporary file, then renames it over the original.
	e.write(".route.yaml.swp", routeDoc("backend", "www.example.com"))
	if err := os.Rename(e.path(".route.yaml.swp"), e.path("route.yaml")); err != nil {
		t.Fatal(err)
	}
	e.eventually(contract, "the renamed route is published", func() bool { r, _ := e.get(routeKey); return r != nil })

	// Another deletes the file and writes it again.
	if err := os.Remove(e.path("gateway.yaml")); err != nil {
		t.Fatal(err)
	}
	e.write("gateway.yaml", strings.Replace(gatewayDoc, "8080", "9090", 1))
	e.eventually(contract, "the recreated Gateway is published", func() bool {
		g, _ := e.get(gatewayKey)
		return g != nil && strings.Contains(string(g.Object), "9090")
	})
}

func TestObjectDefinedTwiceFirstPathWins(t *testing.T) {
	e := newEnv(t)
	e.write("a.yaml", routeDoc("backend", "a.example.com"))
	e.write("b.yaml", routeDoc("backend", "b.example.com"))
	e.start()

	r, _ := e.get(routeKey)
	if r == nil || !strings.Contains(string(r.Object), "a.example.com") || r.Origin != "file:"+e.path("a.yaml")+":1" {
		t.Fatalf("the route of a.yaml should win: %v", r)
	}
	want := e.path("b.yaml") + ":1: HTTPRoute default/backend is also defined at " + e.path("a.yaml") + ":1"
	if !strings.Contains(e.problemText(), want) {
		t.Errorf("problems do not name both files (%q):\n%s", want, e.problemText())
	}

	// When the winner goes, the other takes over.
	if err := os.Remove(e.path("a.yaml")); err != nil {
		t.Fatal(err)
	}
	e.eventually(contract, "the route of b.yaml is published", func() bool {
		r, _ := e.get(routeKey)
		return r != nil && strings.Contains(string(r.Object), "b.example.com")
	})
	if text := e.problemText(); text != "" {
		t.Errorf("problems left: %s", text)
	}
}

func TestNewRejectsMissingFolder(t *testing.T) {
	e := newEnv(t)
	if _, err := file.New(e.path("missing"), e.bus, nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("New of a missing folder: %v; want an error naming it", err)
	}
}

func TestFolderAwayKeepsTheBus(t *testing.T) {
	e := newEnv(t)
	e.dir = e.path("resources")
	e.write("gateway.yaml", gatewayDoc)
	e.start()

	moved := e.dir + ".moved"
	if err := os.Rename(e.dir, moved); err != nil {
		t.Fatal(err)
	}
	e.eventually(contract, "the missing folder is reported", func() bool {
		return strings.HasPrefix(e.problemText(), e.dir+": cannot read the folder")
	})
	if g, _ := e.get(gatewayKey); g == nil {
		t.Fatal("the objects of a folder that went away were deleted")
	}

	if err := os.Rename(moved, e.dir); err != nil {
		t.Fatal(err)
	}
	e.write("route.yaml", routeDoc("backend", "www.example.com"))
	e.eventually(startTimeout, "the folder is followed again", func() bool {
		r, _ := e.get(routeKey)
		return r != nil && e.problemText() == ""
	})
}
