package validate

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
)

// object decodes one YAML object the way manifest.Decode hands it over.
func object(t testing.TB, y string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(j, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// compileYAML compiles a CustomResourceValidation written in YAML, as the
// package compiles a CRD version.
func compileYAML(t testing.TB, y string) *schema {
	t.Helper()
	var def apiextensionsv1.CustomResourceValidation
	if err := yaml.Unmarshal([]byte(y), &def); err != nil {
		t.Fatal(err)
	}
	s, err := compile(&def)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testObjects returns the objects of the package's tests (TestObject's
// cases and serverCases) and the first routes of the benchmark, by name.
func testObjects(routes int) []struct{ name, in string } {
	var out []struct{ name, in string }
	for _, tc := range cases {
		out = append(out, struct{ name, in string }{tc.name, tc.in})
	}
	out = append(out, serverCases...)
	for i := range routes {
		out = append(out, struct{ name, in string }{fmt.Sprintf("route %d", i), gatewaytest.TenantRoute("bench", "eg", i)})
	}
	return out
}

// errorStrings returns the errors of Object on y.
func errorStrings(t testing.TB, y string) []string {
	t.Helper()
	var out []string
	for _, e := range Object(object(t, y)) {
		out = append(out, e.Error())
	}
	return out
}

// TestObject checks what the API server would say about each object: want
// holds the errors, in order; nil for a valid object.
func TestObject(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errorStrings(t, tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("error %d:\n got %s\nwant %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestDefaults checks that the schema's defaults are applied and status is
// dropped, as on create.
func TestDefaults(t *testing.T) {
	obj := object(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: apps}
spec:
  parentRefs: [{name: web, namespace: default}]
  rules: [{backendRefs: [{name: b, port: 80}]}]
status: {parents: []}`)
	if errs := Object(obj); len(errs) > 0 {
		t.Fatal(errs)
	}
	got, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
  namespace: apps
spec:
  parentRefs:
  - group: gateway.networking.k8s.io
    kind: Gateway
    name: web
    namespace: default
  rules:
  - backendRefs:
    - group: ""
      kind: Service
      name: b
      port: 80
      weight: 1
    matches:
    - path:
        type: PathPrefix
        value: /
`
	if string(got) != want {
		t.Errorf("defaulted object:\n%s\nwant:\n%s", got, want)
	}
}

// TestConcurrentFirstUse validates objects of several kinds from several
// goroutines at once, while their schemas compile, and checks that every
// goroutine gets the same answer.
func TestConcurrentFirstUse(t *testing.T) {
	var wg sync.WaitGroup
	results := make([][]string, 8)
	for i := range results {
		wg.Go(func() {
			for _, tc := range cases {
				results[i] = append(results[i], strings.Join(errorStrings(t, tc.in), "\n"))
			}
		})
	}
	wg.Wait()
	for i := 1; i < len(results); i++ {
		if !slices.Equal(results[i], results[0]) {
			t.Fatalf("goroutine %d got other errors than goroutine 0", i)
		}
	}
}

// TestNamespaceLabel checks that a Namespace gets the label the API server
// gives every Namespace, whatever the manifest says.
func TestNamespaceLabel(t *testing.T) {
	obj := object(t, `
apiVersion: v1
kind: Namespace
metadata: {name: apps, labels: {kubernetes.io/metadata.name: other, team: a}}`)
	if errs := Object(obj); len(errs) > 0 {
		t.Fatal(errs)
	}
	labels := obj["metadata"].(map[string]any)["labels"].(map[string]any)
	if labels["kubernetes.io/metadata.name"] != "apps" || labels["team"] != "a" {
		t.Errorf("labels %v", labels)
	}
}
