package manifest

import (
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// duplicateKeys returns the keys that repeat an earlier key of the same
// mapping, anywhere under n. The YAML to JSON conversion would silently keep
// the last one.
func duplicateKeys(n *yaml.Node) []*yaml.Node {
	var dup []*yaml.Node
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.Value != "<<" {
				if seen[k.Value] {
					dup = append(dup, k)
				}
				seen[k.Value] = true
			}
			dup = append(dup, duplicateKeys(n.Content[i+1])...)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			dup = append(dup, duplicateKeys(c)...)
		}
	}
	return dup
}

// mapValue returns the value of key in the mapping n, nil when absent.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scalarValue returns the scalar value of key in the mapping n, "" when it is
// absent or not a scalar.
func scalarValue(n *yaml.Node, key string) string {
	if v := mapValue(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// isNull reports whether n is an empty document's null scalar.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// syntaxLine matches go-yaml's syntax errors: "yaml: line 7: <message>".
var syntaxLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError returns the line a YAML syntax error names (0 when none) and
// its message without the line. The line is go-yaml's: for some errors it is
// where the enclosing block starts rather than the offending line, as kubectl
// reports it too.
func syntaxError(err error) (line int, msg string) {
	m := syntaxLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, strings.TrimPrefix(err.Error(), "yaml: ")
	}
	line, _ = strconv.Atoi(m[1])
	return line, m[2]
}
