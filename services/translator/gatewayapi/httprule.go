package gatewayapi

import (
	"fmt"
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// httpRules is the translation of the rules of one HTTPRoute, independent of
// where it attaches. Its IR routes may be shared by several virtual hosts.
type httpRules struct {
	routes   []*irv1.Route
	backends []*irv1.Backend // the backends the routes send traffic to
	valid    int             // rules translated without a problem
	// invalid are the problems of the invalid rules (a match, filter,
	// timeout or backendRef the rule cannot have), one per rule in rule
	// order; each message names its rule.
	invalid []*problem
	// unresolved is the first reference that could not be resolved.
	unresolved *problem
}

// setConditions sets the conditions the rules decide for one parent:
// ResolvedRefs, and PartiallyInvalid when some rules were dropped while the
// route is accepted.
func (r *httpRules) setConditions(cs *conditions, accepted bool) {
	if r.unresolved != nil {
		cs.set(string(gatewayv1.RouteConditionResolvedRefs), false, r.unresolved.reason, r.unresolved.message)
	} else {
		cs.set(string(gatewayv1.RouteConditionResolvedRefs), true, string(gatewayv1.RouteReasonResolvedRefs), "All references are resolved")
	}
	if accepted && len(r.invalid) > 0 {
		cs.set(string(gatewayv1.RouteConditionPartiallyInvalid), true, r.invalid[0].reason, ruleProblems("Dropped Rule ", r.invalid))
	}
}

// ruleProblems joins the problems of invalid rules into one message, each
// after prefix, so that every invalid rule is named. The condition takes
// the reason of the first.
func ruleProblems(prefix string, ps []*problem) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = prefix + p.message
	}
	return strings.Join(parts, "; ")
}

// notAccepted is why the route cannot be accepted at all: every rule is
// invalid.
func (r *httpRules) notAccepted() *problem {
	if r.valid > 0 || len(r.invalid) == 0 {
		return nil
	}
	return &problem{r.invalid[0].reason, ruleProblems("Rule ", r.invalid)}
}

// buildHTTPRules translates every rule of route.
func (t *routeBuilder) buildHTTPRules(route *gatewayv1.HTTPRoute) *httpRules {
	out := &httpRules{}
	names := newRouteNames(route.Namespace, route.Name)
	for i := range route.Spec.Rules {
		t.buildHTTPRule(route, i, names, out)
	}
	return out
}

// answer500 is what the routes of an invalid rule do: the rule is dropped,
// but the requests it would have matched get an error rather than falling
// through to another rule, since its filters must not be skipped.
var answer500 = &irv1.RouteAction{DirectResponse: &irv1.DirectResponse{Status: 500}}

// grpcAnswer500 is answer500 for the routes of a GRPCRoute.
var grpcAnswer500 = &irv1.RouteAction{DirectResponse: &irv1.DirectResponse{Status: 500}, Grpc: true}

func (t *routeBuilder) buildHTTPRule(route *gatewayv1.HTTPRoute, i int, names *routeNames, out *httpRules) {
	rule := &route.Spec.Rules[i]
	action, used, bad := t.ruleAction(route.Namespace, rule, i, out)
	matches, p := translateMatches(rule.Matches, httpMatch)
	src := &irv1.RouteSource{Kind: resources.KindHTTPRoute, Namespace: route.Namespace, Name: route.Name, Rule: uint32(i)}
	out.add(src, rule.Name, names, translatedRule{action, used, matches, cmpProblem(bad, p, prefixOnly(action, matches))})
}

// translatedRule is one rule of an HTTPRoute or a GRPCRoute, translated.
type translatedRule struct {
	action  *irv1.RouteAction  // what its routes do, shared by them
	used    []*irv1.Backend    // the backends they send traffic to
	matches []*irv1.RouteMatch // nil for a match that cannot be translated
	bad     *problem           // what makes the rule invalid, if anything
}

// add records rule src.Rule of a route, named name: an IR route per match,
// named by names. An invalid rule is dropped, and the requests it would
// match answer 500 (its filters must not be skipped). The routes of a
// GRPCRoute are marked gRPC.
func (out *httpRules) add(src *irv1.RouteSource, name *gatewayv1.SectionName, names *routeNames, r translatedRule) {
	ruleName := ""
	if name != nil {
		ruleName = string(*name)
	}
	if r.bad != nil {
		r.action, r.used = answer500, nil
		if src.Kind == resources.KindGRPCRoute {
			r.action = grpcAnswer500
		}
		out.invalid = append(out.invalid, &problem{r.bad.reason, fmt.Sprintf("%d%s: %s", src.Rule, quotedName(ruleName), r.bad.message)})
	} else {
		out.valid++
	}
	out.backends = append(out.backends, r.used...)
	for j, m := range r.matches {
		if m == nil {
			continue
		}
		s := &irv1.RouteSource{Kind: src.Kind, Namespace: src.Namespace, Name: src.Name, Rule: src.Rule, Match: uint32(j)}
		out.routes = append(out.routes, &irv1.Route{Name: names.name(ruleName, m), Source: s, Match: m, Action: r.action})
	}
}

// ruleAction returns what the routes of a rule do, the backends they send
// traffic to, or the problem that makes the rule invalid. References that
// cannot be resolved are recorded in out.
func (t *routeBuilder) ruleAction(ns string, rule *gatewayv1.HTTPRouteRule, i int, out *httpRules) (*irv1.RouteAction, []*irv1.Backend, *problem) {
	f := t.httpFilters(ns, rule.Filters)
	b := t.backendRefs(routeFrom(resources.KindHTTPRoute, ns), rule.BackendRefs)
	b.invalid = cmpProblem(b.invalid, b.weightsFit())
	if u := cmpProblem(f.unresolved, b.unresolved); u != nil && out.unresolved == nil {
		out.unresolved = within(u, fieldf("rules[%d]", i))
	}
	to, p1 := timeouts(rule.Timeouts)
	re, p2 := retry(rule.Retry)
	bad := cmpProblem(f.invalid, b.invalid, p1, p2)
	if f.redirect != nil && len(rule.BackendRefs) > 0 {
		bad = cmpProblem(bad, unsupported("filter RequestRedirect cannot be used with backendRefs"))
	}
	if bad != nil {
		return nil, nil, bad
	}
	r := &irv1.RouteAction{RequestHeaders: f.request, ResponseHeaders: f.response, Cors: f.cors}
	switch {
	case f.failClosed:
		return answer500, nil, nil
	case f.redirect != nil:
		r.Redirect = f.redirect
		return r, nil, nil
	case len(b.used) == 0: // no backendRefs, or none valid: 500 for all
		r.DirectResponse = &irv1.DirectResponse{Status: 500}
		return r, nil, nil
	}
	r.Backends, r.UrlRewrite, r.Mirrors, r.Timeouts, r.Retry = b.weighted, f.rewrite, f.mirrors, to, re
	if b.invalidShare {
		r.DirectResponse = &irv1.DirectResponse{Status: 500} // for the share of invalid backendRefs
	}
	return r, append(b.used, f.mirrored...), nil
}

// translateMatches translates the matches of a rule of an HTTPRoute or a
// GRPCRoute, match j with match(&ms[j], j). A rule without matches has one
// empty match: it matches every request. A match that cannot be
// translated is nil, and the first problem is returned.
func translateMatches[M any](ms []M, match func(*M, int) (*irv1.RouteMatch, *problem)) ([]*irv1.RouteMatch, *problem) {
	if len(ms) == 0 {
		ms = make([]M, 1)
	}
	out := make([]*irv1.RouteMatch, len(ms))
	var bad *problem
	for j := range ms {
		m, p := match(&ms[j], j)
		bad = cmpProblem(bad, p)
		out[j] = m
	}
	return out, bad
}

// prefixOnly checks that a rule whose redirect or rewrite replaces the
// matched prefix has only PathPrefix matches.
func prefixOnly(action *irv1.RouteAction, matches []*irv1.RouteMatch) *problem {
	if !prefixReplacing(action.GetRedirect(), action.GetUrlRewrite()) {
		return nil
	}
	for j, m := range matches {
		if m != nil && m.GetPath().GetType() != irv1.PathMatch_TYPE_PREFIX {
			return unsupported("matches[%d]: ReplacePrefixMatch needs a PathPrefix match", j)
		}
	}
	return nil
}

func quotedName(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(" (%q)", name)
}
