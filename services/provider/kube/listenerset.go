package kube

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// referrers are the kinds whose references to Secrets and ConfigMaps make
// the provider publish those (see refs.go): their objects are indexed by
// reference and watched by the controllers of the referenced kinds.
var referrers = []string{"Gateway", "ListenerSet", "BackendTLSPolicy"}

// listenerSetRefs returns the certificate Secrets the listeners of ls
// reference; their namespace defaults to the ListenerSet's.
func listenerSetRefs(ls *gatewayv1.ListenerSet) []ref {
	var out []ref
	for _, l := range ls.Spec.Listeners {
		if l.TLS == nil {
			continue
		}
		for _, c := range l.TLS.CertificateRefs {
			if r, ok := coreRef(c.Group, c.Kind, "Secret", c.Namespace, c.Name, ls.Namespace); ok && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// listenerSetReferenced reports whether r is referenced by a ListenerSet of
// its namespace, or of another namespace whose ListenerSets a
// ReferenceGrant in r's namespace allows to. A grant to the Gateway does
// not count: a ListenerSet's references are its own.
func listenerSetReferenced(ctx context.Context, c client.Reader, s served, r ref) (bool, error) {
	if !s.has("ListenerSet") {
		return false, nil
	}
	var sets gatewayv1.ListenerSetList
	if err := c.List(ctx, &sets, client.MatchingFields{refIndex: r.indexKey()}); err != nil {
		return false, err
	}
	for i := range sets.Items {
		from := sets.Items[i].Namespace
		if from == r.Namespace {
			return true, nil
		}
		ok, err := granted(ctx, c, s, "ListenerSet", from, r)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// listenerSetGrantRequests returns the reconcile requests of the objects
// of kind in namespace ns that ListenerSets reference, when a
// ReferenceGrant of ns that names no object changes.
func listenerSetGrantRequests(ctx context.Context, c client.Reader, kind, ns string) []reconcile.Request {
	var sets gatewayv1.ListenerSetList
	if err := c.List(ctx, &sets, client.MatchingFields{refIndex: kind + "/" + ns}); err != nil {
		return nil // no ListenerSets served, or the cache is stopping
	}
	var out []reconcile.Request
	for i := range sets.Items {
		for _, r := range requestsOf(kind, &sets.Items[i]) {
			if r.Namespace == ns {
				out = append(out, r)
			}
		}
	}
	return out
}
