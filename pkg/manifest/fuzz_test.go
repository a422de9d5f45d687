package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds the manifest decoder any bytes: it never panics, and
// every object it returns has a kind it knows and a name.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.in.yaml"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: a, namespace: b}\nspec: {gatewayClassName: c, listeners: [{name: h, port: 80, protocol: HTTP}]}\n"))
	f.Add([]byte("a: &a [*a, *a]\nb: *a\n"))
	f.Add([]byte("---\n---\nkind: HTTPRoute\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _ := Decode("fuzz.yaml", data)
		for _, o := range objs {
			if _, ok := LookupKind(o.Kind.Kind); !ok || o.Name == "" {
				t.Fatalf("object %+v: unknown kind or no name", o)
			}
			if !json.Valid(o.JSON) {
				t.Fatalf("object %s/%s: JSON not valid: %q", o.Kind.Kind, o.Name, o.JSON)
			}
		}
	})
}
