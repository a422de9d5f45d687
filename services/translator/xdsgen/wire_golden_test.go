package xdsgen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/services/translator/gatewayapi"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
	"github.com/gatewire/gatewire/services/translator/xdsgen"
)

// TestWireGolden builds every gateway of the translator's golden cases
// (and of the benchmark's shape) twice, with the wire encoders and
// through the messages only, and checks that both give the same
// resources, byte for byte, or the same error.
func TestWireGolden(t *testing.T) {
	cases, err := filepath.Glob("../testdata/*/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	inputs := map[string]string{"bench": gatewaytest.ManyRoutes(50)}
	for _, c := range cases {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		inputs[c] = string(b)
	}
	built := 0
	for name, in := range inputs {
		idx, err := resourcestest.LoadAll(strings.NewReader(in), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tr := gatewayapi.NewTranslator(idx, gatewayclass.DefaultControllerName)
		for _, gw := range idx.Gateways() {
			res := tr.Translate(gw)
			if res == nil {
				continue
			}
			wire, werr := xdsgen.NewBuilder().Build(res.IR)
			restore := xdsgen.SetWire(false)
			messages, merr := xdsgen.NewBuilder().Build(res.IR)
			restore()
			if (werr == nil) != (merr == nil) || werr != nil && werr.Error() != merr.Error() {
				t.Fatalf("%s, %s: with the wire encoders: %v; through the messages: %v", name, gw, werr, merr)
			}
			if werr != nil {
				continue
			}
			built++
			ws, ms := wire.Set.Suffixes(), messages.Set.Suffixes()
			if strings.Join(ws, " ") != strings.Join(ms, " ") {
				t.Fatalf("%s, %s: resources %v, through the messages %v", name, gw, ws, ms)
			}
			for _, s := range ws {
				if a, b := wire.Set.Get(s), messages.Set.Get(s); !bytes.Equal(a.GetValue(), b.GetValue()) || a.GetVersion() != b.GetVersion() {
					t.Errorf("%s, %s: %s differs:\n wire     %x\n messages %x", name, gw, s, a.GetValue(), b.GetValue())
				}
			}
		}
	}
	if built < len(cases)/2 {
		t.Fatalf("only %d gateways built of %d inputs", built, len(inputs))
	}
}
