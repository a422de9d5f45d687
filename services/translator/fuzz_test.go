package translator

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// FuzzTranslate translates golden inputs whose HTTPRoutes a mutator has
// changed (see mutator), and checks what must hold for any input: no panic,
// a valid xDS snapshot (every resource passes ValidateAll and the set is
// consistent: a user's mistake is a status condition, never an invalid
// snapshot), regular expressions Envoy can compile, complete statuses, and
// the same outputs when translated twice. The golden inputs are the seed
// corpus, and testdata/fuzz/FuzzTranslate holds inputs that once failed.
func FuzzTranslate(f *testing.F) {
	cases, err := filepath.Glob("testdata/*/*.in.yaml")
	if err != nil || len(cases) == 0 {
		f.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range cases {
		doc, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc, []byte{})
		f.Add(doc, []byte{0, 0, 0, 0, 0, 1, 7, 1, 0, 1, 3, 200, 0, 2, 1, 5})
	}
	f.Fuzz(func(t *testing.T, doc, ops []byte) {
		if len(doc) > 1<<16 {
			return
		}
		objects, err := manifest.ReadResources(bytes.NewReader(doc), "fuzz")
		if err != nil {
			return
		}
		(&mutator{ops: ops}).mutate(objects)
		idx := resources.NewIndex()
		for _, o := range objects {
			_, _ = idx.Apply(o) // an object that does not decode is left out
		}
		first, outputs := translateAll(t, idx)
		for _, out := range outputs {
			checkOutput(t, out, objects)
		}
		if again, _ := translateAll(t, idx); !bytes.Equal(first, again) {
			t.Fatalf("two translations differ:\n%s", describe(objects))
		}
	})
}

// checkOutput checks the invariants of one gateway's output.
func checkOutput(t *testing.T, out *Output, objects []*busv1.Resource) {
	t.Helper()
	if out.XDSError != nil {
		t.Fatalf("gateway %s: %v\nobjects:\n%s", out.Gateway, out.XDSError, describe(objects))
	}
	for _, typed := range out.XDS.GetResources() {
		for _, a := range typed.GetResources() {
			m, err := a.UnmarshalNew()
			if err != nil {
				t.Fatalf("gateway %s: %s: %v", out.Gateway, a.GetTypeUrl(), err)
			}
			checkRegexes(t, m.ProtoReflect(), objects)
		}
	}
	for _, st := range out.Statuses {
		conds := st.GetConditions()
		for _, p := range st.GetParents() {
			conds = append(conds, p.GetConditions()...)
		}
		for _, c := range conds {
			if c.GetType() == "" || c.GetReason() == "" || (c.GetStatus() != "True" && c.GetStatus() != "False") {
				t.Fatalf("status of %s: incomplete condition %v", st.GetObject(), c)
			}
		}
	}
}

// checkRegexes checks that every regular expression in m (Envoy's
// RegexMatcher, in any message or Any within it) compiles as RE2 would.
func checkRegexes(t *testing.T, m protoreflect.Message, objects []*busv1.Resource) {
	t.Helper()
	if m.Descriptor().FullName() == "envoy.type.matcher.v3.RegexMatcher" {
		expr := m.Get(m.Descriptor().Fields().ByName("regex")).String()
		if _, err := regexp.Compile(expr); err != nil {
			t.Fatalf("regex %q: %v\nobjects:\n%s", expr, err, describe(objects))
		}
	}
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			t.Fatalf("%s: %v", a.GetTypeUrl(), err)
		}
		checkRegexes(t, inner.ProtoReflect(), objects)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				checkRegexes(t, v.List().Get(i).Message(), objects)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				checkRegexes(t, mv.Message(), objects)
				return true
			})
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			checkRegexes(t, v.Message(), objects)
		}
		return true
	})
}
