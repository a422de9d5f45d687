package conformance

import (
	"fmt"
	"runtime/debug"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator"
	"github.com/gatewire/gatewire/services/translator/gatewayapi"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// outcome is what gatewire makes of the objects of one conformance test:
// the statuses it gives and the xDS of every gateway.
type outcome struct {
	docs     []document
	skipped  map[string]int
	problems []manifest.Problem
	// generations are the objects' generations, by objectKey.
	generations map[string]int64
	classes     map[string]*busv1.Status
	gateways    map[types.NamespacedName]*translator.Output
	// parents are the route parent statuses of every gateway, by objectKey.
	parents map[string][]*busv1.RouteParentStatus
	// panics are the translations that panicked, with the stack.
	panics []string
}

func objectKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// load decodes the base, the setup objects, the manifest file of one
// conformance test and the extra objects its code creates (YAML), and
// translates every class and gateway. bump, when set, is re-applied at
// generation 2 after a first translation, as the suite's observedGeneration
// tests do, and everything is translated again.
func load(t *testing.T, file, extra string, bump *objectRef) *outcome {
	t.Helper()
	baseDocs, baseProblems, err := baseDocs(t)
	if err != nil {
		t.Fatal(err)
	}
	docs, skipped, problems, err := prepared(file)
	if err != nil {
		t.Fatal(err)
	}
	if extra != "" {
		objs, probs := manifest.Decode(file+" (test code)", []byte(extra))
		problems = append(problems, probs...)
		for _, m := range objs {
			docs = append(docs, document{source: m.Path, object: m})
		}
	}
	o := &outcome{docs: append(slices.Clone(baseDocs), docs...), skipped: skipped,
		problems: append(slices.Clone(baseProblems), problems...), generations: map[string]int64{}}
	idx, err := index(o.docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range o.docs {
		o.generations[objectKey(d.object.Kind.Kind, d.object.Namespace, d.object.Name)] = 1
	}
	o.translate(idx)
	if bump != nil {
		o.bump(t, idx, *bump)
		o.translate(idx)
	}
	return o
}

// bump re-applies the object ref at generation 2.
func (o *outcome) bump(t *testing.T, idx *resources.Index, ref objectRef) {
	t.Helper()
	i := slices.IndexFunc(o.docs, func(d document) bool {
		return objectKey(d.object.Kind.Kind, d.object.Namespace, d.object.Name) == ref.key()
	})
	if i < 0 {
		t.Fatalf("no %s to bump", ref)
	}
	m := o.docs[i].object
	_, err := idx.Apply(&busv1.Resource{
		Group: m.Kind.Group, Version: m.Kind.Version, Kind: m.Kind.Kind,
		Namespace: m.Namespace, Name: m.Name, Generation: 2, ResourceVersion: "2", Object: m.JSON,
	})
	if err != nil {
		t.Fatal(err)
	}
	o.generations[ref.key()] = 2
}

// translate translates every class and gateway of idx, recording panics.
func (o *outcome) translate(idx *resources.Index) {
	o.classes = map[string]*busv1.Status{}
	o.gateways = map[types.NamespacedName]*translator.Output{}
	o.parents = map[string][]*busv1.RouteParentStatus{}
	o.panics = nil
	for _, name := range idx.GatewayClasses() {
		o.guard("GatewayClass "+name, func() {
			if st := gatewayapi.TranslateClass(idx, gatewayclass.DefaultControllerName, name); st != nil {
				o.classes[name] = st
			}
		})
	}
	for _, gw := range idx.Gateways() {
		o.guard("Gateway "+gw.String(), func() {
			out := translator.Translate(idx, gatewayclass.DefaultControllerName, gw)
			if out == nil {
				return
			}
			o.gateways[gw] = out
			for _, st := range out.Statuses[1:] {
				ref := st.GetObject()
				key := objectKey(ref.GetKind(), ref.GetNamespace(), ref.GetName())
				o.parents[key] = append(o.parents[key], st.GetParents()...)
			}
		})
	}
}

// guard runs fn and records a panic as one of o's panics.
func (o *outcome) guard(what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			o.panics = append(o.panics, fmt.Sprintf("%s: panic: %v\n%s", what, r, debug.Stack()))
		}
	}()
	fn()
}

// gatewayStatus returns the status gatewire gives the Gateway gw; nil when
// gatewire does not translate it.
func (o *outcome) gatewayStatus(gw types.NamespacedName) *busv1.Status {
	if out := o.gateways[gw]; out != nil {
		return out.Statuses[0]
	}
	return nil
}
