package translator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// changesPerCase is how many random changes each golden input goes through.
const changesPerCase = 60

// TestIncrementalEqualsFull is a property test: for every golden input,
// after each of a random sequence of changes (an object removed, put back,
// or changed anywhere in its spec, data or labels), the translator that
// reuses what did not change gives, for every gateway, exactly what a new
// translation gives: the IR, every status, the proxy, and the xDS
// resources with their versions.
func TestIncrementalEqualsFull(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	reused, applied, skipped, patched := 0, 0, 0, 0
	for _, in := range cases {
		objects := decodeFile(t, in)
		rng := rand.New(rand.NewPCG(7, uint64(len(objects))))
		idx := indexOf(t, objects)
		x := newTranslator(idx, gatewayclass.DefaultControllerName)
		known := map[types.NamespacedName]bool{}
		check := func(step string) {
			for _, gw := range idx.Gateways() {
				known[gw] = true
			}
			for gw := range known {
				got := inline(t, x.translate(gw))
				checkSameOutput(t, fmt.Sprintf("%s %s, %s", in, gw, step), got, Translate(idx, gatewayclass.DefaultControllerName, gw))
				if got != nil && got.RoutesBuilt < len(got.Statuses)-1 {
					reused++
				}
				if got != nil && got.Patched {
					patched++
				}
			}
		}
		check("at first")
		removed := map[int]bool{}
		for step := range changesPerCase {
			i := rng.IntN(len(objects))
			o := objects[i]
			var what string
			switch {
			case removed[i]:
				what = "put back " + o.GetKind() + " " + o.GetName()
				apply(t, idx, o)
				delete(removed, i)
			case rng.IntN(4) == 0:
				what = "removed " + o.GetKind() + " " + o.GetName()
				idx.Remove(o.GetKind(), o.GetNamespace(), o.GetName())
				removed[i] = true
			default:
				what = "changed " + o.GetKind() + " " + o.GetName()
				changed := proto.CloneOf(o)
				changed.Object = mutateObject(rng, o.GetObject())
				if _, err := idx.Apply(changed); err != nil {
					skipped++
					continue // does not decode: the index keeps the object
				}
				applied++
				objects[i] = changed
			}
			check(fmt.Sprintf("change %d (%s)", step, what))
		}
	}
	t.Logf("%d changes applied, %d did not decode; %d translations reused route units, %d patched the last", applied, skipped, reused, patched)
	if reused == 0 || patched == 0 {
		t.Fatal("no translation reused anything, or none was a patch: the property says nothing of them")
	}
}

func apply(t *testing.T, idx *resources.Index, o *busv1.Resource) {
	t.Helper()
	if _, err := idx.Apply(o); err != nil {
		t.Fatalf("apply %s: %v", bus.ResourceKey(o.GetKind(), o.GetNamespace(), o.GetName()), err)
	}
}

// mutateObject changes one value of an object's JSON: in its spec, or
// anywhere outside its identity (apiVersion, kind, name, namespace). For
// routes it may also insert a piece of a rule (see mutator).
func mutateObject(rng *rand.Rand, object []byte) []byte {
	var doc map[string]any
	if json.Unmarshal(object, &doc) != nil {
		return object
	}
	ops := make([]byte, 64)
	for i := range ops {
		ops[i] = byte(rng.IntN(256))
	}
	m := &mutator{ops: ops}
	if _, ok := doc["spec"]; ok && rng.IntN(4) > 0 {
		switch rng.IntN(3) {
		case 0:
			m.insert(doc)
		case 1:
			m.replace(doc)
		default:
			m.remove(doc)
		}
	} else {
		body := map[string]any{}
		for k, v := range doc {
			if k != "apiVersion" && k != "kind" && k != "metadata" {
				body[k] = v
			}
		}
		if md, ok := doc["metadata"].(map[string]any); ok {
			if labels, ok := md["labels"]; ok {
				body["labels"] = labels
			}
		}
		m.replace(map[string]any{"spec": body})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return object
	}
	return b
}

// patchInput is a gateway of two HTTP listeners (one for *.example.com,
// one for any host, on two ports) and routes of every hostname shape:
// exact, wildcard, none; some of them sharing Services.
func patchInput() string {
	var y strings.Builder
	y.WriteString(gatewaytest.GatewayClass())
	y.WriteString(`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: bench}
spec:
  gatewayClassName: gatewire
  listeners:
  - {name: wild, protocol: HTTP, port: 80, hostname: "*.example.com"}
  - {name: any, protocol: HTTP, port: 80}
  - {name: other, protocol: HTTP, port: 8080}
`)
	for i := range 12 {
		y.WriteString(gatewaytest.TenantRoute("bench", "eg", i))
		y.WriteString(gatewaytest.TenantBackends("bench", i))
	}
	for i, host := range []string{"*.example.com", "", "*.a.example.com", "x.a.example.com", "*", "route-3.example.com"} {
		fmt.Fprintf(&y, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shape-%d, namespace: bench}
spec:
  parentRefs: [{name: eg}]
  hostnames: [%q]
  rules:
  - matches: [{path: {type: PathPrefix, value: /s%d}}]
    backendRefs: [{name: svc-%d-a, port: 80}]
`, i, host, i, i%3)
	}
	return y.String()
}

// TestPatchEqualsFull is the property of TestIncrementalEqualsFull on a
// gateway a patch can follow: random changes of its routes, Services and
// EndpointSlices, most of them patches.
func TestPatchEqualsFull(t *testing.T) {
	objects, err := resourcestest.DecodeAll(strings.NewReader(patchInput()), "patch")
	if err != nil {
		t.Fatal(err)
	}
	idx := indexOf(t, objects)
	x := newTranslator(idx, gatewayclass.DefaultControllerName)
	gw := types.NamespacedName{Namespace: "bench", Name: "eg"}
	rng := rand.New(rand.NewPCG(3, 5))
	patched := 0
	removed := map[int]bool{}
	for step := range 600 {
		i := rng.IntN(len(objects))
		o := objects[i]
		if o.GetKind() == resources.KindGateway || o.GetKind() == resources.KindGatewayClass {
			continue
		}
		switch {
		case removed[i]:
			apply(t, idx, o)
			delete(removed, i)
		case rng.IntN(4) == 0:
			idx.Remove(o.GetKind(), o.GetNamespace(), o.GetName())
			removed[i] = true
		default:
			changed := proto.CloneOf(o)
			changed.Object = mutateObject(rng, o.GetObject())
			if _, err := idx.Apply(changed); err != nil {
				continue
			}
			objects[i] = changed
		}
		got := inline(t, x.translate(gw))
		if got != nil && got.Patched {
			patched++
		}
		checkSameOutput(t, fmt.Sprintf("step %d", step), got, Translate(idx, gatewayclass.DefaultControllerName, gw))
		if t.Failed() {
			t.Fatalf("after step %d (%s %s)", step, o.GetKind(), o.GetName())
		}
	}
	t.Logf("%d of the translations were patches", patched)
	if patched < 100 {
		t.Fatalf("only %d translations were patches", patched)
	}
}
