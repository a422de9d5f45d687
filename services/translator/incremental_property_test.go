package translator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator/resources"
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
	reused, applied, skipped := 0, 0, 0
	for _, in := range cases {
		objects := decodeFile(t, in)
		rng := rand.New(rand.NewPCG(7, uint64(len(objects))))
		idx := indexOf(t, objects)
		x := newTranslator(idx)
		known := map[types.NamespacedName]bool{}
		check := func(step string) {
			for _, gw := range idx.Gateways() {
				known[gw] = true
			}
			for gw := range known {
				got := inline(t, x.translate(gw))
				checkSameOutput(t, fmt.Sprintf("%s %s, %s", in, gw, step), got, Translate(idx, gw))
				if got != nil && got.RoutesBuilt < len(got.Statuses)-1 {
					reused++
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
	t.Logf("%d changes applied, %d did not decode, %d translations reused route units", applied, skipped, reused)
	if reused == 0 {
		t.Fatal("no translation reused anything: the property says nothing")
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
