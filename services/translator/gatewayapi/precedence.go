package gatewayapi

import (
	"cmp"
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// comparePrecedence orders the routes of one virtual host as the Gateway
// API requires, since Envoy takes the first route that matches a request:
//
//   - Exact paths first, then regular expressions (whose place the spec
//     leaves to implementations: this is Envoy Gateway's), then prefixes;
//   - within a type, the longest path first (a prefix without the trailing
//     "/" it may have, which means nothing);
//   - then a match with a method; more header matches; more query matches;
//   - then the oldest route, then the first by namespace and name;
//   - then the first rule, and the first match of a rule.
func comparePrecedence(a, b entry) int {
	ma, mb := a.route.GetMatch(), b.route.GetMatch()
	if c := cmp.Compare(pathRank(ma.GetPath()), pathRank(mb.GetPath())); c != 0 {
		return c
	}
	if c := cmp.Compare(pathLength(mb.GetPath()), pathLength(ma.GetPath())); c != 0 {
		return c // longer path first
	}
	if c := cmp.Compare(boolRank(ma.GetMethod() == ""), boolRank(mb.GetMethod() == "")); c != 0 {
		return c // a method match first
	}
	if c := cmp.Compare(len(mb.GetHeaders()), len(ma.GetHeaders())); c != 0 {
		return c // more header matches first
	}
	if c := cmp.Compare(len(mb.GetQueryParams()), len(ma.GetQueryParams())); c != 0 {
		return c // more query matches first
	}
	if c := a.created.Compare(b.created); c != 0 {
		return c // the oldest route first
	}
	sa, sb := a.route.GetSource(), b.route.GetSource()
	return cmp.Or(cmp.Compare(sa.GetNamespace(), sb.GetNamespace()), cmp.Compare(sa.GetName(), sb.GetName()),
		cmp.Compare(sa.GetRule(), sb.GetRule()), cmp.Compare(sa.GetMatch(), sb.GetMatch()))
}

// pathRank orders path match types: exact, then regular expression, then
// prefix.
func pathRank(p *irv1.PathMatch) int {
	switch p.GetType() {
	case irv1.PathMatch_TYPE_EXACT:
		return 0
	case irv1.PathMatch_TYPE_REGEX:
		return 1
	}
	return 2
}

// pathLength is the number of characters that count in a path match.
func pathLength(p *irv1.PathMatch) int {
	if p.GetType() == irv1.PathMatch_TYPE_PREFIX {
		return len(strings.TrimRight(p.GetValue(), "/"))
	}
	return len(p.GetValue())
}

// boolRank is 1 for true: sorting by it puts false first.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
