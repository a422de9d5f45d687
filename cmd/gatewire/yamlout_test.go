package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// TestJSONToYAMLMatches checks that jsonToYAML prints what sigs.k8s.io/yaml
// prints, on values whose YAML needs care: numbers of every kind, strings
// that YAML would read as something else, keys to sort, nesting, empty
// values.
func TestJSONToYAMLMatches(t *testing.T) {
	for _, j := range []string{
		`{"b": 1, "a": -2, "c": 3.5, "d": 1e3, "e": -0, "f": 1.0, "g": 9223372036854775807, "h": 18446744073709551615, "i": 1e400, "j": 0.000001, "k": 123456789012}`,
		`{"s": ["yes", "no", "y", "n", "on", "off", "true", "null", "~", "", " lead", "trail ", "1", "1.5", "0x1f", "1e3", "-", "a: b", "# c", "multi\nline", "tab\there", "é ü", "quote\"d", "'single'", "@at", "*star", "&amp", "!bang", "%pct", "[x]", "{y}", "|", ">", "=", "<<"]}`,
		`{"nested": {"list": [{"z": null, "a": true}, [], {}], "empty": "", "false": false}}`,
		`[1, "two", {"three": 3}]`,
		`"just a string"`,
		`42`,
		`null`,
		`{"kind": "HTTPRoute", "metadata": {"name": "r", "generation": 1, "labels": {"app.kubernetes.io/name": "x"}}, "status": {"parents": [{"conditions": [{"lastTransitionTime": "1970-01-01T00:00:00Z", "observedGeneration": 1, "status": "True"}]}]}}`,
	} {
		want, err := yaml.JSONToYAML([]byte(j))
		if err != nil {
			t.Fatal(err)
		}
		got, err := jsonToYAML([]byte(j))
		if err != nil {
			t.Fatalf("%s: %v", j, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", j, got, want)
		}
	}
	for _, bad := range []string{`{"a": }`, `{"a": 1} {"b": 2}`, `[1, 2`} {
		if _, err := jsonToYAML([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// fastYAMLCases are values whose YAML needs care in fastYAML: folding of
// long strings with spaces, go-yaml's order of keys with numbers, keys too
// long for a simple key, lists in lists, maps in lists whose values are
// lists, keys that YAML would read as something else.
var fastYAMLCases = []string{
	`{"message": "Route is accepted and this message goes on for long enough to pass the eightieth column", "m": "a b"}`,
	`{"deep": {"deeper": {"deepest": {"k": "a message of some words that ends near the width of the line x"}}}}`,
	`{"long": "` + strings.Repeat("x", 200) + `", "words": "` + strings.Repeat("ab ", 30) + `"}`,
	`{"a10": 1, "a9": 2, "a01": 3, "a1": 4, "b": 5, "A": 6, "_": 7, "1": 8, "10": 9, "2": 10, "é": 11, "a.b": 12, "": 13}`,
	`{"` + strings.Repeat("k", 130) + `": 1}`,
	`{"l": [[1, [2, 3]], [], [{}], [{"a": [1, {"b": [2]}], "c": "d"}]], "m": [{"x": []}, {"y": {}}]}`,
	`[[1, 2], {"a": 1, "b": [3]}, "s", null, true, 1.5, {}]`,
	`{"80": "80", "true": "true", "null": "null", "yes": "yes", "0x1f": "0x1f", "1:20": "1:20", "k: v": "k: v", "- x": "- x"}`,
	`{"time": "2026-12-07T06:30:53Z", "ip": "10.0.0.1", "path": "/api/v1", "neg": "-1", "dot": ".5", "inf": ".inf"}`,
	`["a long string with spaces that is surely more than eighty characters long so it folds", {"k": ["a long string with spaces that is surely more than eighty characters long so it folds", "x"]}]`,
	`{"m": "double  spaces  that  run  on  and  on  past  the  eightieth  column  of  this  line  ok  and  on"}`,
	`{"m": "spaces at eighty: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx x  y   z    w     v"}`,
	`{"q": "it's: a single-quoted string, with spaces, that runs past the eightieth column of the line, 'twice'"}`,
	`{"d": "\"double-quoted\" when it starts with a quote, and runs past the eightieth column of a line"}`,
	`{"` + strings.Repeat("k", 80) + `": " a leading space, quoted, that starts past the eightieth column"}`,
}

// TestFastYAMLMatches checks that fastYAML, where it writes a value, writes
// what go-yaml v2 does: on the crafted cases, and on every document the
// command's golden files and the translator's golden outputs hold (which
// jsonToYAML printed); most of the latter must take the fast path.
func TestFastYAMLMatches(t *testing.T) {
	var docs [][]byte
	for _, c := range fastYAMLCases {
		docs = append(docs, []byte(c))
	}
	files, _ := filepath.Glob("testdata/*/*.yaml")
	outs, _ := filepath.Glob("../../services/translator/testdata/*/*.out.yaml")
	if len(files)+len(outs) < 50 {
		t.Fatalf("only %d golden files", len(files)+len(outs))
	}
	for _, f := range append(files, outs...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			if j, err := yaml.YAMLToJSON([]byte(doc)); err == nil && len(j) > 0 && string(j) != "null" {
				docs = append(docs, j)
			}
		}
	}
	fast := 0
	for _, j := range docs {
		if compareFastYAML(t, j) {
			fast++
		}
	}
	if fast < len(docs)*3/4 {
		t.Errorf("fastYAML wrote %d of %d documents, want most", fast, len(docs))
	}
}

// compareFastYAML compares fastYAML with go-yaml v2 on the JSON value j and
// reports whether fastYAML wrote it.
func compareFastYAML(t *testing.T, j []byte) bool {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return false
	}
	v = resolveNumbers(v)
	got, ok := fastYAML(v)
	if !ok {
		return false
	}
	want, err := yamlv2.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", j, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%.200s:\nfastYAML\n%s\ngo-yaml\n%s", j, got, want)
	}
	return true
}

// FuzzFastYAML compares fastYAML with go-yaml v2 on any JSON value.
func FuzzFastYAML(f *testing.F) {
	for _, c := range fastYAMLCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, j []byte) {
		compareFastYAML(t, j)
	})
}
