package file

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/manifest"
)

// TestNextMatchesDecoded checks that next, which cuts and splices an
// object's JSON, publishes what nextDecoded does, which decodes and encodes
// it: the same Resource and record, for a first publication and for one
// after a change of spec or of metadata. The objects are those of the
// translator's golden inputs, the benchmark's routes and crafted ones.
func TestNextMatchesDecoded(t *testing.T) {
	inputs, err := filepath.Glob("../../translator/testdata/*/*.in.yaml")
	if err != nil || len(inputs) < 50 {
		t.Fatalf("golden inputs: %d, %v", len(inputs), err)
	}
	var objects []manifest.Object
	for _, path := range inputs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		objs, _ := manifest.Decode(path, data)
		objects = append(objects, objs...)
	}
	objs, problems := manifest.Decode("bench.yaml", []byte(gatewaytest.ManyRoutes(20)+crafted))
	if len(problems) > 0 {
		t.Fatalf("crafted objects: %v", problems)
	}
	objects = append(objects, objs...)

	spliced := 0
	for _, o := range objects {
		if _, ok := parseObjectJSON(o.JSON); ok {
			spliced++
		}
		prevs := []record{{}, {generation: 3}, {generation: 3, spec: [32]byte{1}}}
		for i, prev := range prevs {
			seen := i > 0
			got, gotRec, err := next(o, prev, seen)
			if err != nil {
				t.Fatal(err)
			}
			want, wantRec, err := nextDecoded(o, prev, seen)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, want) || !reflect.DeepEqual(gotRec, wantRec) {
				t.Fatalf("%s:%d (previous %+v):\nnext        %s %+v\nnextDecoded %s %+v", o.Path, o.Line, prev,
					got.GetObject(), gotRec, want.GetObject(), wantRec)
			}
		}
	}
	if spliced < len(objects)*9/10 {
		t.Errorf("only %d of %d objects were taken apart", spliced, len(objects))
	}
}

// crafted are objects whose metadata has keys before and after the two the
// provider sets, keys and values that JSON escapes, and a uid.
const crafted = `
---
apiVersion: v1
kind: Service
metadata:
  name: a
  namespace: bench
  uid: "u-\"1\"-<&>"
  labels: {zq: v-w, a: b}
  annotations: {generation: "not the field", "x.io/e": "\"ü\u2028<&>\\", resourceVersion: "{}"}
spec:
  ports: [{port: 80, name: http}]
---
apiVersion: v1
kind: Namespace
metadata: {name: zz}
`

// TestObjectJSONRefuses checks that JSON that cannot be taken apart with
// certainty is refused: next then decodes it.
func TestObjectJSONRefuses(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `{}`, `{"metadata":[]}`, `{"kind":"A"}`, `{"metadata":{"na\"me":"x"}}`,
		`{"a\u0062":1,"metadata":{}}`, `{"metadata":{"name":}}`, `{"metadata":{"name":"x"}`, `{"metadata":{"name":"x}}`,
		`{"metadata" :{}}`, `{"metadata":{},}`,
	} {
		if _, ok := parseObjectJSON([]byte(in)); ok {
			t.Errorf("%s was taken apart", in)
		}
	}
	j, ok := parseObjectJSON([]byte(`{"a":[1,{"b":"}"}],"metadata":{},"z":"\""}`))
	if !ok {
		t.Fatal("valid JSON refused")
	}
	if got := j.stamped(2, "ab"); !bytes.Equal(got, []byte(`{"a":[1,{"b":"}"}],"metadata":{"generation":2,"resourceVersion":"ab"},"z":"\""}`)) {
		t.Errorf("stamped: %s", got)
	}
	if got := j.withoutMetadata(); !bytes.Equal(got, []byte(`{"a":[1,{"b":"}"}],"z":"\""}`)) {
		t.Errorf("withoutMetadata: %s", got)
	}
}

// FuzzObjectJSON checks that parseObjectJSON never panics, and that on the
// JSON EncodeJSON writes for an object with metadata, stamped and
// withoutMetadata give what setting and deleting the fields of the decoded
// object and encoding it again gives.
func FuzzObjectJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"}"}],"metadata":{"name":"x","uid":"u"},"z":"\""}`))
	f.Add([]byte(`{"metadata":{}}`))
	f.Add([]byte(`{"kind":"A","metadata":{"annotations":{"k":"v"},"zz":[]},"spec":{"x":1.5e3}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseObjectJSON(data)
		obj, err := decodeObject(data)
		if err != nil {
			return
		}
		meta, ok := obj["metadata"].(map[string]any)
		if !ok {
			return
		}
		delete(meta, "generation")
		delete(meta, "resourceVersion")
		canonical, err := manifest.EncodeJSON(obj)
		if err != nil {
			return
		}
		j, ok := parseObjectJSON(canonical)
		if !ok {
			return // an escaped key: next decodes such objects
		}
		meta["generation"], meta["resourceVersion"] = int64(7), "0a1b"
		want, _ := manifest.EncodeJSON(obj)
		if got := j.stamped(7, "0a1b"); !bytes.Equal(got, want) {
			t.Fatalf("stamped %s\nwant    %s", got, want)
		}
		delete(obj, "metadata")
		want, _ = manifest.EncodeJSON(obj)
		if got := j.withoutMetadata(); !bytes.Equal(got, want) {
			t.Fatalf("withoutMetadata %s\nwant            %s", got, want)
		}
	})
}
