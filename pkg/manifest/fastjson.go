package manifest

import (
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// fastJSON converts n to JSON without the round trip of nodeJSON (marshal
// the node to YAML, which sigs.k8s.io/yaml then reads again with YAML 1.1's
// rules), for the nodes whose meaning both YAML versions agree on: no
// anchors, aliases, explicit tags or merge keys, and plain scalars that are
// unambiguous — decimal integers, true/false, null, strings that start
// with a letter and are no YAML 1.1 boolean (yes, no, on, off, y, n),
// paths (starting with /), IPv4 addresses and durations (10s, 1h30m). It
// reports false for any other node, which nodeJSON then converts; the
// result is then the same bytes as nodeJSON's (TestFastJSONMatches). It
// also returns the value the bytes encode, equal to what unmarshal decodes
// from them: maps, lists, strings, int64s, booleans and nils.
func fastJSON(n *yaml.Node) ([]byte, any, bool) {
	v, ok := fastValue(n)
	if !ok {
		return nil, nil, false
	}
	b, err := EncodeJSON(v)
	return b, v, err == nil
}

func fastValue(n *yaml.Node) (any, bool) {
	if n.Anchor != "" {
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, ok := fastValue(n.Content[i])
			key, isString := k.(string)
			if !ok || !isString || key == "<<" {
				return nil, false
			}
			if m[key], ok = fastValue(n.Content[i+1]); !ok {
				return nil, false
			}
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			var ok bool
			if s[i], ok = fastValue(c); !ok {
				return nil, false
			}
		}
		return s, true
	case yaml.ScalarNode:
		return fastScalar(n)
	}
	return nil, false
}

// dottedQuad is an IPv4 address: no number, date or time in either YAML
// version.
var dottedQuad = regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,3}){3}$`)

// duration is a Gateway API duration (10s, 1h30m, 500ms): no number, date or
// time in either YAML version either.
var duration = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans and YAML
// 1.2 as strings (lower-cased).
var yaml11Bools = map[string]bool{"y": true, "yes": true, "n": true, "no": true, "on": true, "off": true}

// The plain scalars both fast paths take (fastScalar from go-yaml's
// resolution, parseFast from the text), by what they are read as.

func plainNull(v string) bool {
	return v == "" || v == "~" || v == "null" || v == "Null" || v == "NULL"
}

func plainBool(v string) (value, ok bool) {
	switch v {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

// decimalInt is v as a decimal integer without leading zeros or sign of
// 18 digits at most, which both YAML versions read alike.
func decimalInt(v string) (int64, bool) {
	if len(v) > 0 && len(v) <= 18 && (v == "0" || v[0] >= '1' && v[0] <= '9' || v[0] == '-' && len(v) > 1 && v[1] >= '1' && v[1] <= '9') {
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return i, true
		}
	}
	return 0, false
}

// plainString reports whether the plain scalar v, which go-yaml reads as a
// string, is one in YAML 1.1 too: it starts with a letter and is no YAML 1.1
// boolean, or with a slash, or it is an IPv4 address or a duration.
func plainString(v string) bool {
	c := v[0] // a plain string scalar is not empty
	letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	return letter && !yaml11Bools[strings.ToLower(v)] || c == '/' || dottedQuad.MatchString(v) || duration.MatchString(v)
}

func fastScalar(n *yaml.Node) (any, bool) {
	if n.Style&yaml.TaggedStyle != 0 {
		return nil, false
	}
	if n.Style != 0 { // quoted, literal or folded
		return n.Value, n.Tag == "!!str"
	}
	v := n.Value
	switch n.Tag {
	case "!!null":
		return nil, plainNull(v)
	case "!!bool":
		b, ok := plainBool(v)
		return b, ok
	case "!!int":
		if i, ok := decimalInt(v); ok {
			return i, true
		}
	case "!!str":
		return v, plainString(v)
	}
	return nil, false
}
