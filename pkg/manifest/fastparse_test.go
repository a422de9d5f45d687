package manifest

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// fastTricky are manifests at the edges of parseFast's subset.
var fastTricky = []string{
	"a: 1\nb: [x, 'y''z', \"q\\\"\\n\", {c: d}]\nc:\n- e\n- f: g\n  h: ~\nd: {}\ne: []\n",
	"# c\n---\n\n---\nkind: A # c\nx:    # c\n  - # c\n    y: /p#q\n  -   z: 'a # b'\n",
	"a:\n  b:\n    c: 0\n  d: -12\n e: 1\n",
	"a: b\n  c\n",
	"a: b: c\n",
	"a:b: c\nd: e:f\n",
	"a: 1\na: 2\n",
	"a: {b: 1, b: 2}\n",
	"- a\n- b\n",
	"a: [1, 2, ]\n",
	"a: {b: c\n",
	"a: [b, [c, [d]]]\n",
	"a: yes\nb: 0777\nc: 1e3\nd: 10.0.0.1\ne: 1.2.3\nf: -0\ng: 01\n",
	"a: \"\\u00e9\"\n",
	"a:\n- b\nc: d\n",
	"a:\n- b\n- c: d\n  e:\n  - f\n",
	"- a: b\nc: d\n",
	"\"a\": b\n'c' : d\n",
	"a: 'b'c\n",
	"a: 'b' #c\n",
	"a: \"b\"#c\n",
	"  a: 1\nb: 2\n",
	"a: &x 1\n",
	"a: |\n  b\n",
	"a: [b: c]\n",
	"a: {b: c, d: [e, f]} # x\n",
	"a:\n-\n- b\n",
	"a: -\n",
	"--- \na: 1\n...\n",
	"a: 1\r\nb: 2\r\n",
	"a:\tb\n",
	"a: x #\n",
	"? a\n: b\n",
	"a: {b: /c, d: 1}\n",
	"a: {\"b\": 'c'}\n",
	"a: [/x:y]\n",
	"a: b # c: d\n",
	"x-y_z.w/v: 1\n",
	"timeouts: {request: 10s, backendRequest: 1h30m}\nb: [500ms, 5d, 1_0s, 123456s]\n",
	"timeouts: {request: 10s, backendRequest: 1h30m}\nb: 500ms\n",
	"a b: c d\n",
	"a: True\nb: NULL\nc: FALSE\nd: Null\n",
	"null: 1\n",
	"true: 1\n",
	"a: ~\n",
	strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
	"a: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
}

// checkParseFast fails when parseFast reads data and go-yaml reads it
// otherwise, or when Decode's result over parseFast differs from its
// result over go-yaml's nodes. It reports whether parseFast read data.
func checkParseFast(t *testing.T, name string, data []byte) bool {
	t.Helper()
	docs, ok := parseFast(data)
	if !ok {
		return false
	}
	nodes, err := documents(data)
	if err != nil {
		t.Fatalf("%s: parseFast read it, go-yaml did not: %v\n%s", name, err, data)
	}
	if len(nodes) != len(docs) {
		t.Fatalf("%s: parseFast read %d documents, go-yaml %d\n%s", name, len(docs), len(nodes), data)
	}
	for i, n := range nodes {
		want, ok := fastValue(n)
		switch {
		case !ok:
			t.Fatalf("%s: document %d: parseFast read %v, fastValue leaves it to nodeJSON\n%s", name, i, docs[i].value, data)
		case len(duplicateKeys(n)) > 0:
			t.Fatalf("%s: document %d has duplicate keys, which parseFast read\n%s", name, i, data)
		case !reflect.DeepEqual(docs[i].value, want):
			t.Fatalf("%s: document %d:\nparseFast %#v\ngo-yaml   %#v\n%s", name, i, docs[i].value, want, data)
		case docs[i].line != n.Line:
			t.Fatalf("%s: document %d starts on line %d, parseFast says %d", name, i, n.Line, docs[i].line)
		}
	}
	if objects, fast := decodeFast(name, data, Options{}); fast {
		want, problems := decodeNodes(name, data, Options{})
		if len(problems) > 0 || !sameObjects(objects, want) {
			t.Fatalf("%s: decoded over parseFast %s, over go-yaml %s, problems %v", name, describe(objects), describe(want), problems)
		}
	}
	return true
}

// sameObjects compares objects field by field (a Kind holds a func).
func sameObjects(a, b []Object) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind.Group != y.Kind.Group || x.Kind.Version != y.Kind.Version || x.Kind.Kind != y.Kind.Kind || x.Namespace != y.Namespace || x.Name != y.Name || x.Path != y.Path ||
			x.Line != y.Line || x.Generation != y.Generation || !bytes.Equal(x.JSON, y.JSON) {
			return false
		}
	}
	return true
}

func describe(objects []Object) string {
	var b strings.Builder
	for _, o := range objects {
		fmt.Fprintf(&b, "\n  %s %s/%s line %d generation %d: %s", o.Kind.Kind, o.Namespace, o.Name, o.Line, o.Generation, o.JSON)
	}
	return b.String()
}

// TestParseFastMatches reads every YAML file of the repository, the
// benchmarks' generated manifests and fastTricky with parseFast and with
// go-yaml: wherever parseFast reads a manifest, both give the same
// documents and Decode the same objects. The generated manifests, the
// shape of most users' files, must take the fast path.
func TestParseFastMatches(t *testing.T) {
	for i, s := range fastTricky {
		checkParseFast(t, "tricky "+string(rune('a'+i)), []byte(s))
	}
	generated := map[string]string{
		"gateway":  gatewaytest.GatewayClass() + gatewaytest.Gateway("bench", "eg"),
		"route":    gatewaytest.TenantRoute("bench", "eg", 7),
		"backends": gatewaytest.TenantBackends("bench", 7),
		"many":     gatewaytest.ManyRoutes(20),
	}
	for name, s := range generated {
		if !checkParseFast(t, name, []byte(s)) {
			t.Errorf("%s: parseFast does not read the generated manifest", name)
		}
	}
	// Every YAML file: inputs, golden outputs, CRDs and deployments. Of
	// the inputs (*.in.yaml) and examples, most must take the fast path;
	// the rest use what parseFast leaves to go-yaml (block scalars of
	// certificates, values such as 5s or a UID that starts with a digit).
	read, files, inputsRead, inputs := 0, 0, 0, 0
	repoYAML(t, func(path string, data []byte) {
		fast := checkParseFast(t, path, data)
		example := filepath.Base(filepath.Dir(path)) == "examples"
		if example && !fast {
			t.Errorf("%s: parseFast does not read the example", path)
		}
		files++
		if fast {
			read++
		}
		if example || strings.HasSuffix(path, ".in.yaml") {
			inputs++
			if fast {
				inputsRead++
			}
		}
	})
	t.Logf("parseFast read %d of the repository's %d YAML files, %d of its %d inputs", read, files, inputsRead, inputs)
	if inputs < 50 || inputsRead < inputs*3/4 {
		t.Errorf("parseFast read %d of %d inputs, want three quarters", inputsRead, inputs)
	}
}

// cmpSkip skips a .git folder, or returns err.
// FuzzParseFast checks parseFast against go-yaml on any bytes (see
// checkParseFast).
func FuzzParseFast(f *testing.F) {
	for _, s := range fastTricky {
		f.Add([]byte(s))
	}
	f.Add([]byte(gatewaytest.TenantRoute("bench", "eg", 7)))
	f.Add([]byte(gatewaytest.TenantBackends("bench", 7)))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParseFast(t, "fuzz", data)
	})
}

// BenchmarkDecode decodes one tenant route's manifest and its backends'
// (the propagation benchmark's files) with the fast reader and with
// go-yaml's nodes: reading, strict decoding, the API server's checks and
// normalizing.
func BenchmarkDecode(b *testing.B) {
	data := []byte(gatewaytest.TenantRoute("bench", "eg", 7) + "---\n" + gatewaytest.TenantBackends("bench", 7))
	for _, c := range []struct {
		name   string
		decode func(string, []byte, Options) ([]Object, []Problem)
	}{{"fast", DecodeWith}, {"nodes", decodeNodes}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			for b.Loop() {
				if objects, problems := c.decode("bench.yaml", data, Options{}); len(objects) != 5 || len(problems) > 0 {
					b.Fatalf("%d objects, problems %v", len(objects), problems)
				}
			}
			b.ReportMetric(float64((testkit.CPUTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(testkit.LoadAverage(b), "load1")
		})
	}
}
