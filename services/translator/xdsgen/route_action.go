package xdsgen

import (
	"math"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// retryOn are the failures a retry policy retries besides its status
// codes: connection failures, resets and timeouts, as the Gateway API asks.
const retryOn = "connect-failure,refused-stream,reset"

// routeAction forwards a route's requests to its backends, with its
// rewrite, mirrors, timeouts and retries.
func routeAction(r *irv1.Route) *routev3.RouteAction {
	action := clusters(r.GetAction().GetBackends())
	action.Timeout = routeTimeout(r)
	action.RetryPolicy = retryPolicy(r)
	for _, m := range r.GetAction().GetMirrors() {
		action.RequestMirrorPolicies = append(action.RequestMirrorPolicies, mirrorPolicy(m))
	}
	rw := r.GetAction().GetUrlRewrite()
	if host := rw.GetHostname(); host != "" {
		action.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: host}
	}
	switch {
	case !rw.GetHasPath():
	case rw.GetFullPath() != "":
		action.RegexRewrite = &matcherv3.RegexMatchAndSubstitute{
			Pattern:      &matcherv3.RegexMatcher{Regex: "^/.*$"},
			Substitution: rw.GetFullPath(),
		}
	default:
		action.PrefixRewrite = prefixRewrite(rw.GetPrefix())
	}
	return action
}

// clusters sends traffic to one cluster, or shares it among weighted
// clusters when there are several backends, an invalid share, or
// per-backend header filters.
func clusters(backends []*irv1.WeightedBackend) *routev3.RouteAction {
	if len(backends) == 1 && backends[0].GetBackend() != "" &&
		backends[0].GetRequestHeaders() == nil && backends[0].GetResponseHeaders() == nil {
		return &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: backends[0].GetBackend()}}
	}
	action := &routev3.RouteAction{}
	weighted := &routev3.WeightedCluster{Clusters: make([]*routev3.WeightedCluster_ClusterWeight, 0, len(backends))}
	for _, b := range backends {
		name := b.GetBackend()
		if name == "" {
			name = InvalidBackendCluster
			action.ClusterNotFoundResponseCode = routev3.RouteAction_INTERNAL_SERVER_ERROR
		}
		weighted.Clusters = append(weighted.Clusters, &routev3.WeightedCluster_ClusterWeight{
			Name:                    name,
			Weight:                  wrapperspb.UInt32(b.GetWeight()),
			RequestHeadersToAdd:     headersToAdd(b.GetRequestHeaders()),
			RequestHeadersToRemove:  b.GetRequestHeaders().GetRemove(),
			ResponseHeadersToAdd:    headersToAdd(b.GetResponseHeaders()),
			ResponseHeadersToRemove: b.GetResponseHeaders().GetRemove(),
		})
	}
	action.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: weighted}
	return action
}

// routeTimeout is the request timeout, 0 for none. A route without a
// retry policy makes one attempt, so its backendRequest timeout bounds the
// whole request: the route timeout is the shorter of the two. With a retry
// policy and no request timeout, a request may take as long as all its
// attempts. Otherwise Envoy's default (15s) holds.
func routeTimeout(r *irv1.Route) *durationpb.Duration {
	to := r.GetAction().GetTimeouts()
	req, per := to.GetRequest(), to.GetBackendRequest()
	switch {
	case per == nil:
		return req
	case r.GetAction().GetRetry() == nil:
		return shorter(req, per)
	case req != nil:
		return req
	}
	attempts := 1 + int64(max(r.GetAction().GetRetry().GetAttempts(), 1))
	return durationpb.New(scaled(per.AsDuration(), attempts))
}

// shorter is the shorter of a request timeout req (nil when unset) and a
// backendRequest timeout per, where 0 is no timeout.
func shorter(req, per *durationpb.Duration) *durationpb.Duration {
	switch {
	case per.AsDuration() == 0 && req != nil:
		return req
	case req.AsDuration() != 0 && req.AsDuration() < per.AsDuration():
		return req
	}
	return per
}

// scaled is d×n, or the longest duration when that overflows.
func scaled(d time.Duration, n int64) time.Duration {
	if d > time.Duration(math.MaxInt64/n) {
		return time.Duration(math.MaxInt64)
	}
	return d * time.Duration(n)
}

// retryPolicy is the route's retry policy: retries on connection failures
// and on its status codes, with its backoff as the base interval, and the
// backendRequest timeout per attempt. A route without retries has none:
// its one attempt is bounded by the route timeout (see routeTimeout), not
// by a policy of zero retries, which gRPC's xDS client rejects (it needs
// num_retries of at least 1 when set).
func retryPolicy(r *irv1.Route) *routev3.RetryPolicy {
	rt := r.GetAction().GetRetry()
	if rt == nil {
		return nil
	}
	p := &routev3.RetryPolicy{PerTryTimeout: r.GetAction().GetTimeouts().GetBackendRequest(), RetryOn: retryOn}
	if len(rt.GetCodes()) > 0 {
		p.RetryOn += ",retriable-status-codes"
		p.RetriableStatusCodes = rt.GetCodes()
	}
	if rt.GetAttempts() > 0 {
		p.NumRetries = wrapperspb.UInt32(rt.GetAttempts())
	}
	if b := rt.GetBackoff(); b.AsDuration() > 0 {
		p.RetryBackOff = &routev3.RetryPolicy_RetryBackOff{BaseInterval: b, MaxInterval: durationpb.New(scaled(b.AsDuration(), 10))}
	}
	return p
}

// mirrorPolicy mirrors a share of the requests to a backend's cluster, in
// millionths.
func mirrorPolicy(m *irv1.Mirror) *routev3.RouteAction_RequestMirrorPolicy {
	p := &routev3.RouteAction_RequestMirrorPolicy{Cluster: m.GetBackend()}
	if pct := m.GetPercent(); pct < 100 {
		p.RuntimeFraction = &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{
			Numerator:   uint32(math.Round(pct * 10_000)),
			Denominator: typev3.FractionalPercent_MILLION,
		}}
	}
	return p
}
