package manifest

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestFastJSONMatches checks that fastJSON, where it converts a node, gives
// the bytes nodeJSON's round trip gives: on tricky scalars, and on every
// mapping of every YAML file of the repository's test data and examples.
func TestFastJSONMatches(t *testing.T) {
	tricky := `
a: yes
b: 'yes'
c: on
d: 0777
e: 1e3
f: 2001-12-14
g: ~
h: Null
i: !!str 3
j: "<b>&amp;</b>"
k: [1, -2, 0, 99999999999999999999, 123456789012345678]
l: {x: null, y: true, z: False}
m: |
  two
  lines
n: plain words here
o: 1_000
p: .inf
q: 0x1F
r: -0
s: &anchor v
t: *anchor
u: Y
v: é ünïcode
w: 12:30
x: "\t"
y: /api/v1
z: 10.0.0.1
aa: [1.2.3, 10.0.0.1.5, /, 192.168.1.255]
ab: [10s, 1h30m, 500ms, 1h2m3s4ms, 5d, 1h2m3s4ms5s, 123456s, 1_0s, 0x10s]
`
	fast, converted := 0, 0
	check := func(where string, n *yaml.Node) {
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
				converted++
				if got, v, ok := fastJSON(n); ok {
					fast++
					want, err := slowJSON(n)
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("%s line %d: fastJSON gives %s, nodeJSON %s (%v)", where, n.Line, got, want, err)
					}
					var decoded any
					if err := unmarshal(got, &decoded); err != nil || !reflect.DeepEqual(v, decoded) {
						t.Errorf("%s line %d: fastJSON's value %#v is not what its JSON decodes to, %#v (%v)", where, n.Line, v, decoded, err)
					}
				}
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(n)
	}
	dec := yaml.NewDecoder(strings.NewReader(tricky))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	check("tricky", &doc)
	// Plain scalars YAML 1.1 and 1.2 read differently, or that only the
	// round trip knows how to convert, are left to it.
	for _, v := range []string{"yes", "on", "Off", "Y", "n", "0777", "1e3", "1.5", "2001-12-14", "!!str 3", "99999999999999999999",
		"1_000", ".inf", "0x1F", "-0", "+1", "12:30", "&a v", "=", "<<"} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("k: "+v), &doc); err != nil {
			t.Fatal(err)
		}
		if _, ok := fastValue(doc.Content[0].Content[1]); ok {
			t.Errorf("fastJSON converted the ambiguous scalar %q", v)
		}
	}
	files := 0
	repoYAML(t, func(path string, data []byte) {
		if !strings.Contains(path, "testdata") && !strings.Contains(path, "examples") || len(data) > 1<<20 {
			return
		}
		files++
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if dec.Decode(&doc) != nil {
				return
			}
			check(path, &doc)
		}
	})
	t.Logf("%d files: fastJSON converted %d of %d mappings and sequences", files, fast, converted)
	if files < 50 || fast < converted/2 {
		t.Errorf("%d files, %d of %d converted fast: the test data is not what this test expects", files, fast, converted)
	}
}
