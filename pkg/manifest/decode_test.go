package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// result is what a golden file holds for one manifest.
type result struct {
	Objects  []resultObject `json:"objects,omitempty"`
	Problems []string       `json:"problems,omitempty"`
}

type resultObject struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Namespace  string          `json:"namespace,omitempty"`
	Name       string          `json:"name"`
	Line       int             `json:"line"`
	Object     json.RawMessage `json:"object"`
}

// TestDecode decodes every testdata/decode/<case>.in.yaml and compares the
// objects and problems with <case>.out.yaml; -update rewrites the latter.
func TestDecode(t *testing.T) {
	ins, err := filepath.Glob("testdata/decode/*.in.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no test cases: %v", err)
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			objs, problems := Decode(in, data)
			var res result
			for _, o := range objs {
				res.Objects = append(res.Objects, resultObject{
					APIVersion: o.Kind.APIVersion(), Kind: o.Kind.Kind, Namespace: o.Namespace,
					Name: o.Name, Line: o.Line, Object: o.JSON,
				})
			}
			for _, p := range problems {
				res.Problems = append(res.Problems, p.Error())
			}
			got, err := sigsyaml.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".in.yaml") + ".out.yaml"
			testkit.Golden(t, golden, got)
		})
	}
}

func TestUIDIsStableAndDistinct(t *testing.T) {
	a := UID("HTTPRoute", "default", "backend")
	if a != UID("HTTPRoute", "default", "backend") {
		t.Fatal("UID is not stable")
	}
	if a == UID("HTTPRoute", "default", "backend2") || a == UID("Gateway", "default", "backend") {
		t.Fatal("UID collides across names or kinds")
	}
	if len(a) != 36 || a[14] != '8' {
		t.Fatalf("UID %q is not a version 8 UUID", a)
	}
}

func TestKindsHaveGoTypes(t *testing.T) {
	for _, k := range Kinds() {
		if k.newObject() == nil || !k.accepted(k.Version) {
			t.Errorf("kind %s is incomplete", k.Kind)
		}
		if got, ok := LookupKind(k.Kind); !ok || got.Kind != k.Kind {
			t.Errorf("LookupKind(%q) = %v, %v", k.Kind, got.Kind, ok)
		}
	}
}
