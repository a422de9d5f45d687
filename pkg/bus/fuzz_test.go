package bus

import (
	"bytes"
	"testing"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// fuzzLimit is the decode limit of the fuzz target: small, so that a
// found bomb is cheap.
const fuzzLimit = 1 << 20

// FuzzDecodeValue feeds the bus codec values with headers of any kind: it
// never panics, never returns a value past the limit, and what it accepts
// re-encodes.
func FuzzDecodeValue(f *testing.F) {
	plain, _ := proto.Marshal(&busv1.Resource{Kind: "HTTPRoute", Namespace: "default", Name: "r", Object: []byte(`{"spec":{}}`)})
	big, _ := proto.Marshal(&busv1.Resource{Kind: "Secret", Name: "s", Object: bytes.Repeat([]byte("x"), 64<<10)})
	packed := encoder().EncodeAll(big, nil)
	for _, typ := range []string{"gatewire.bus.v1.Resource", "gatewire.bus.v1.XdsSnapshot", "gatewire.bus.v1.Status", "", "nonsense"} {
		f.Add(typ, "", plain)
		f.Add(typ, "zstd", packed)
	}
	f.Add("gatewire.bus.v1.Resource", "zstd", packed[:len(packed)/2])
	f.Add("gatewire.bus.v1.Resource", "gzip", plain)
	f.Fuzz(func(t *testing.T, typ, encoding string, data []byte) {
		h := nats.Header{}
		h.Set(HeaderType, typ)
		if encoding != "" {
			h.Set(HeaderEncoding, encoding)
		}
		msg, err := decodeValue(h, data, fuzzLimit)
		if err != nil {
			return
		}
		out, err := proto.Marshal(msg)
		if err != nil {
			t.Fatalf("a decoded %s does not marshal: %v", typ, err)
		}
		if len(out) > fuzzLimit {
			t.Fatalf("decoded %d bytes, past the limit %d", len(out), fuzzLimit)
		}
	})
}
