package manifest

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	kjson "sigs.k8s.io/json"
)

// UID is the uid of an object read from a manifest that names none: a UUID
// (version 8, RFC 9562) made of the SHA-256 of "<kind>/<namespace>/<name>", so
// that an object keeps its uid across edits and restarts.
func UID(kind, namespace, name string) string {
	sum := sha256.Sum256([]byte(kind + "/" + namespace + "/" + name))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x80 // version 8
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// unmarshal decodes JSON the way Kubernetes does: case-sensitive keys, and
// integers kept as int64 rather than float64.
func unmarshal(data []byte, v any) error {
	return kjson.UnmarshalCaseSensitivePreserveInts(data, v)
}

// typeError matches encoding/json's "cannot unmarshal" errors, whose field is
// "<Go struct>.<json path>".
var typeError = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go struct field [^.\s]+\.(\S+) of type (\S+)$`)

// strict decodes raw into the kind's Go type and reports every unknown or
// duplicate field and the first value of the wrong type. It reports true when
// the object is clean.
func (d *decoder) strict(n *yaml.Node, kind Kind, name string, raw []byte) bool {
	strictErrs, err := kjson.UnmarshalStrict(raw, kind.newObject())
	if err != nil {
		msg, field := err.Error(), ""
		if m := typeError.FindStringSubmatch(msg); m != nil {
			field = m[2]
			msg = fmt.Sprintf("field %q: cannot unmarshal %s into %s", field, m[1], m[3])
		}
		d.problem(lineOf(n, field), "%s %q: %s", kind.Kind, name, msg)
		return false
	}
	for _, e := range strictErrs {
		field := ""
		if fe, ok := e.(interface{ FieldPath() string }); ok {
			field = fe.FieldPath()
		}
		d.problem(lineOf(n, field), "%s %q: %v", kind.Kind, name, e)
	}
	return len(strictErrs) == 0
}

// lineOf returns the line of the field at path ("spec.listeners[0].port";
// indexes may be missing, as in encoding/json's type errors) under the
// mapping n: the line of the deepest part of the path found in n, n's own
// line when none is; 0 when n is nil.
func lineOf(n *yaml.Node, path string) int {
	if n == nil {
		return 0
	}
	line := n.Line
	for path != "" && n != nil {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
			continue
		}
		next, at, rest := step(n, path)
		if next == nil {
			return line
		}
		n, line, path = next, at, rest
	}
	return line
}

// step follows the first segment of path from n and returns the node it
// reaches, the line of that segment (of the key, for a mapping) and the rest
// of the path; next is nil when it cannot follow the path.
func step(n *yaml.Node, path string) (next *yaml.Node, line int, rest string) {
	path = strings.TrimPrefix(path, ".")
	switch n.Kind {
	case yaml.MappingNode:
		// Keys may hold dots (label names), so try the longest key first.
		var best *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if !strings.HasPrefix(path, k) || (best != nil && len(k) <= len(best.Value)) {
				continue
			}
			if r := path[len(k):]; r == "" || r[0] == '.' || r[0] == '[' {
				best, rest = n.Content[i], r
			}
		}
		if best == nil {
			return nil, 0, ""
		}
		if rest == "" { // the key itself is what the path names
			return best, best.Line, ""
		}
		return valueOf(n, best), best.Line, rest
	case yaml.SequenceNode:
		var i int
		if _, err := fmt.Sscanf(path, "[%d]", &i); err == nil {
			if i < 0 || i >= len(n.Content) {
				return nil, 0, ""
			}
			return n.Content[i], n.Content[i].Line, path[strings.IndexByte(path, ']')+1:]
		}
		// No index: the first element in which the path goes on.
		for _, item := range n.Content {
			if next, _, _ := step(item, path); next != nil {
				return item, item.Line, path
			}
		}
	}
	return nil, 0, ""
}

// valueOf returns the value that follows key in the mapping n.
func valueOf(n, key *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i] == key {
			return n.Content[i+1]
		}
	}
	return nil
}
