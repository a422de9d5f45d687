package main

import (
	"testing"

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
