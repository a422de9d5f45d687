package gatewayapi

import (
	"math"
	"slices"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"google.golang.org/protobuf/proto"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// maxWeight is the largest weight of a backendRef, as the API server
// allows; Envoy also wants the weights of a rule to add up to 32 bits.
const maxWeight = 1_000_000

// ruleBackends is the translation of the backendRefs of one rule.
type ruleBackends struct {
	// weighted are the shares of traffic; the share of backendRefs that
	// cannot be resolved has an empty backend name.
	weighted []*irv1.WeightedBackend
	// used are the resolved backends that get traffic.
	used []*irv1.Backend
	// invalidShare is set when some traffic belongs to unresolved refs.
	invalidShare bool
	// invalid is a problem that makes the rule invalid (a bad weight or
	// filter); unresolved is the first backendRef that cannot be resolved.
	invalid, unresolved *problem
}

// backendRefs translates the backendRefs of a rule of a route (from: its
// kind and namespace). References to the same backend with no filters of
// their own are merged, adding up their weights; a reference with weight 0
// gets no traffic.
func (t *routeBuilder) backendRefs(from Reference, refs []gatewayv1.HTTPBackendRef) *ruleBackends {
	out := &ruleBackends{}
	for i := range refs {
		ref := &refs[i]
		weight, req, resp, p := backendRefOptions(ref)
		if p != nil {
			out.invalid = cmpProblem(out.invalid, under(p, fieldf("backendRefs[%d]", i)))
			continue
		}
		b, p := t.resolveBackendFrom(from, ref.BackendObjectReference)
		if p != nil {
			out.unresolved = cmpProblem(out.unresolved, within(p, fieldf("backendRefs[%d]", i)))
		}
		if weight == 0 {
			continue
		}
		w := &irv1.WeightedBackend{Weight: weight, RequestHeaders: req, ResponseHeaders: resp}
		if p == nil {
			w.Backend = b.Name
		}
		out.add(w, b)
	}
	return out
}

// weightsFit is the problem of a rule whose weights add up to more than
// Envoy takes (32 bits), or nil. HTTPRoute rules check it; GRPCRoute rules
// do not yet.
func (r *ruleBackends) weightsFit() *problem {
	var total uint64
	for _, w := range r.weighted {
		total += uint64(w.Weight)
	}
	if total > math.MaxUint32 {
		return unsupported("backendRefs: the weights add up to %d, more than %d", total, uint32(math.MaxUint32))
	}
	return nil
}

// add records a weighted share, merging it into an equal one.
func (r *ruleBackends) add(w *irv1.WeightedBackend, b *irv1.Backend) {
	i := slices.IndexFunc(r.weighted, func(o *irv1.WeightedBackend) bool {
		return o.Backend == w.Backend && proto.Equal(o.RequestHeaders, w.RequestHeaders) &&
			proto.Equal(o.ResponseHeaders, w.ResponseHeaders)
	})
	if i >= 0 && uint64(r.weighted[i].Weight)+uint64(w.Weight) <= math.MaxUint32 {
		r.weighted[i].Weight += w.Weight
		return
	}
	r.weighted = append(r.weighted, w)
	switch {
	case w.Backend == "":
		r.invalidShare = true
	case !slices.ContainsFunc(r.used, func(u *irv1.Backend) bool { return u.Name == b.Name }):
		r.used = append(r.used, b)
	}
}

// backendRefOptions returns the weight (1 when unset) and the header
// filters of a backendRef.
func backendRefOptions(ref *gatewayv1.HTTPBackendRef) (uint32, *irv1.HeaderModifier, *irv1.HeaderModifier, *problem) {
	weight := uint32(1)
	if ref.Weight != nil {
		if *ref.Weight < 0 || *ref.Weight > maxWeight {
			return 0, nil, nil, unsupported("weight: %d is not between 0 and %d", *ref.Weight, maxWeight)
		}
		weight = uint32(*ref.Weight)
	}
	req, resp, p := backendFilters(ref.Filters)
	return weight, req, resp, p
}
