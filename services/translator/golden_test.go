package translator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/translator/gatewayapi"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// TestGolden translates every testdata/<kind>/<case>.in.yaml and compares
// the result (statuses, IR, xDS, infra of every gateway, and the statuses
// of the classes) with <case>.out.yaml.
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases in testdata: %v", err)
	}
	for _, in := range cases {
		name := strings.TrimSuffix(strings.TrimPrefix(in, "testdata/"), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			got := renderCase(t, in)
			testkit.Golden(t, strings.TrimSuffix(in, ".in.yaml")+".out.yaml", got)
		})
	}
}

// renderCase translates the objects of file as the service would after its
// initial sync and renders everything it would write as YAML: for a gateway
// that ListenerSets name but that does not exist, their statuses only.
func renderCase(t *testing.T, file string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	idx, err := resourcestest.LoadAll(f, file)
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]json.RawMessage{}
	for _, name := range idx.GatewayClasses() {
		if st := gatewayapi.TranslateClass(idx, gatewayclass.DefaultControllerName, name); st != nil {
			classes[ClassStatusKey(name)] = protoJSON(t, st)
		}
	}
	gateways := map[string]any{}
	for _, gw := range idx.Gateways() {
		out := Translate(idx, gatewayclass.DefaultControllerName, gw)
		if out == nil {
			continue
		}
		statuses := map[string]json.RawMessage{}
		for _, st := range out.Statuses {
			statuses[statusKey(st, gw)] = protoJSON(t, st)
		}
		g := map[string]any{"statuses": statuses, "ir": protoJSON(t, out.IR), "infra": protoJSON(t, out.Proxy)}
		if out.XDSError != nil {
			g["xdsError"] = out.XDSError.Error()
		} else {
			g["xds"] = protoJSON(t, out.XDS)
		}
		gateways[gw.String()] = g
	}
	for _, gw := range idx.MissingListenerSetParents() {
		statuses := map[string]json.RawMessage{}
		for _, st := range gatewayapi.OrphanListenerSetStatuses(idx, gw) {
			statuses[statusKey(st, gw)] = protoJSON(t, st)
		}
		gateways[gw.String()] = map[string]any{"statuses": statuses}
	}
	doc, err := json.Marshal(map[string]any{"gatewayClassStatuses": classes, "gateways": gateways})
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(doc)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

func protoJSON(t *testing.T, m proto.Message) json.RawMessage {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatalf("marshal %T: %v", m, err)
	}
	return b
}
