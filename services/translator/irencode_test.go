package translator

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/manifest"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// TestIREncoderMatchesMarshal checks that irEncoder gives proto's
// deterministic encoding of every IR of the golden inputs, and of the
// benchmark's gateway after route edits, where it reuses the bytes of the
// unchanged virtual hosts and backends of its last encoding.
func TestIREncoderMatchesMarshal(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	compared := 0
	for _, in := range cases {
		idx := indexOf(t, decodeFile(t, in))
		for _, gw := range idx.Gateways() {
			out := Translate(idx, gatewayclass.DefaultControllerName, gw)
			if out == nil || out.IR == nil {
				continue
			}
			checkIREncoding(t, in+" "+gw.String(), &irEncoder{}, out.IR)
			compared++
		}
	}
	if compared < 20 {
		t.Fatalf("compared %d IRs of the golden inputs, want at least 20", compared)
	}

	const n = 50
	idx := benchIndex(t, n)
	gw := types.NamespacedName{Namespace: "bench", Name: "eg"}
	x := newTranslator(idx, gatewayclass.DefaultControllerName)
	enc := &irEncoder{}
	checkIREncoding(t, "the benchmark's gateway", enc, x.translate(gw).IR)
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 20 {
		i := rng.IntN(n)
		y := strings.Replace(gatewaytest.TenantRoute("bench", "eg", i), fmt.Sprintf("value: route-%d}", i), fmt.Sprintf("value: edit-%d}", k), 1)
		if k%5 == 4 { // a new hostname: a virtual host comes
			y = strings.ReplaceAll(y, fmt.Sprintf("route-%d.example.com", i), fmt.Sprintf("new-%d.example.com", k))
		}
		rs, err := manifest.ReadResources(strings.NewReader(y), "edit")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := idx.Apply(rs[0]); err != nil {
			t.Fatal(err)
		}
		checkIREncoding(t, fmt.Sprintf("edit %d of route %d", k, i), enc, x.translate(gw).IR)
	}
	if len(enc.vhosts) < n || len(enc.backends) < 2*n {
		t.Errorf("the encoder keeps %d virtual hosts and %d backends, want at least %d and %d", len(enc.vhosts), len(enc.backends), n, 2*n)
	}
}

func checkIREncoding(t *testing.T, what string, enc *irEncoder, ir *irv1.Gateway) {
	t.Helper()
	want, err := proto.MarshalOptions{Deterministic: true}.Marshal(ir)
	if err != nil {
		t.Fatal(err)
	}
	fp, got, err := enc.encode(ir)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: the encoding differs from proto.Marshal's (%d and %d bytes)", what, len(got), len(want))
	}
	if fp != sha256.Sum256(want) {
		t.Fatalf("%s: the fingerprint is not the encoding's hash", what)
	}
}
