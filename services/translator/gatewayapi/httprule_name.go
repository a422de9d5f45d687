package gatewayapi

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// routeNames names the IR routes of one HTTPRoute after what they match,
// never after their position, so that reordering rules or matches renames
// nothing: "<namespace>/<route>/<hash>", or
// "<namespace>/<route>/<rule name>/<hash>" for a named rule, where hash is
// 16 hex digits of a SHA-256 of the match (path, method, and the header and
// query matches sorted by name, since their order means nothing). Matches
// that are the same in one route get "-2", "-3", ... after the first, in
// rule and match order.
type routeNames struct {
	prefix string
	used   map[string]int
}

func newRouteNames(namespace, name string) *routeNames {
	return &routeNames{prefix: namespace + "/" + name + "/", used: map[string]int{}}
}

// name returns the name of the route for match m of the rule named
// ruleName ("" for an unnamed rule).
func (n *routeNames) name(ruleName string, m *irv1.RouteMatch) string {
	base := n.prefix
	if ruleName != "" {
		base += ruleName + "/"
	}
	base += matchHash(m)
	n.used[base]++
	if c := n.used[base]; c > 1 {
		return base + "-" + strconv.Itoa(c)
	}
	return base
}

// matchHash hashes what a match means.
func matchHash(m *irv1.RouteMatch) string {
	b := make([]byte, 0, 128)
	b = appendField(b, m.GetPath().GetType().String())
	b = appendField(b, m.GetPath().GetValue())
	b = appendField(b, m.GetMethod())
	headers := slices.Clone(m.GetHeaders())
	slices.SortFunc(headers, func(a, b *irv1.HeaderMatch) int { return cmp.Compare(a.Name, b.Name) })
	for _, h := range headers {
		b = appendField(b, "header")
		b = appendField(b, h.Name)
		b = appendField(b, h.Value)
		b = strconv.AppendBool(b, h.Regex)
	}
	queries := slices.Clone(m.GetQueryParams())
	slices.SortFunc(queries, func(a, b *irv1.QueryMatch) int { return cmp.Compare(a.Name, b.Name) })
	for _, q := range queries {
		b = appendField(b, "query")
		b = appendField(b, q.Name)
		b = appendField(b, q.Value)
		b = strconv.AppendBool(b, q.Regex)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// appendField appends s to b with its length, so that no two lists of
// fields encode alike.
func appendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
