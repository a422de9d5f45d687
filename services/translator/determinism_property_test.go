package translator

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator/gatewayapi"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// shuffles is how many orders of its objects each golden input is
// translated in.
const shuffles = 25

// TestTranslationIgnoresInputOrder is a property test: for every golden
// input, the objects applied to the index in many random orders (and Go's
// random map iteration within each run) give byte-identical outputs: the
// IR, every status, the infra spec, and the xDS snapshot with its version.
func TestTranslationIgnoresInputOrder(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range cases {
		t.Run(in, func(t *testing.T) {
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			objects, err := resourcestest.DecodeAll(f, in)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(objects))))
			want := renderAll(t, indexOf(t, objects))
			for i := range shuffles {
				shuffled := append([]*busv1.Resource(nil), objects...)
				rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
				if got := renderAll(t, indexOf(t, shuffled)); !bytes.Equal(got, want) {
					t.Fatalf("order %d of the objects gives different outputs:\n%s\nwant\n%s", i, got, want)
				}
			}
		})
	}
}

// indexOf applies objects to a new index in order.
func indexOf(t testing.TB, objects []*busv1.Resource) *resources.Index {
	t.Helper()
	idx := resources.NewIndex()
	for _, o := range objects {
		if _, err := idx.Apply(o); err != nil {
			t.Fatalf("apply %s: %v", o.GetOrigin(), err)
		}
	}
	return idx
}

// renderAll translates every gateway and class of idx and returns the
// deterministic encoding of everything the translator would publish.
func renderAll(t testing.TB, idx *resources.Index) []byte {
	t.Helper()
	b, _ := translateAll(t, idx)
	return b
}

// translateAll translates every gateway and class of idx and returns the
// deterministic encoding of everything the translator would publish, and
// the outputs of the gateways.
func translateAll(t testing.TB, idx *resources.Index) ([]byte, []*Output) {
	t.Helper()
	var outputs []*Output
	var out bytes.Buffer
	opts := proto.MarshalOptions{Deterministic: true}
	write := func(what string, m proto.Message) {
		b, err := opts.Marshal(m)
		if err != nil {
			t.Fatalf("marshal %s: %v", what, err)
		}
		fmt.Fprintf(&out, "%s %x\n", what, b)
	}
	for _, name := range idx.GatewayClasses() {
		if st := gatewayapi.TranslateClass(idx, gatewayclass.DefaultControllerName, name); st != nil {
			write("class "+name, st)
		}
	}
	for _, gw := range idx.Gateways() {
		o := Translate(idx, gatewayclass.DefaultControllerName, gw)
		if o == nil {
			continue
		}
		outputs = append(outputs, o)
		write("ir "+gw.String(), o.IR)
		write("infra "+gw.String(), o.Proxy)
		for i, st := range o.Statuses {
			write(fmt.Sprintf("status %s %d", gw, i), st)
		}
		if o.XDSError != nil {
			fmt.Fprintf(&out, "xds error %s: %v\n", gw, o.XDSError)
			continue
		}
		write("xds "+gw.String(), o.XDS)
		fmt.Fprintf(&out, "version %s %s\n", gw, o.XDS.GetVersion())
	}
	return out.Bytes(), outputs
}
