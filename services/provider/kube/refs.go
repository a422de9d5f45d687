package kube

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// refIndex is the cache index of Gateways, ListenerSets and
// BackendTLSPolicies by the Secrets and ConfigMaps they reference. Each reference is indexed as
// "<Kind>/<namespace>/<name>" and as "<Kind>/<namespace>" (to find the
// references into a namespace when a ReferenceGrant that names no object
// changes).
const refIndex = "gatewire.dev/references"

// ref names a referenced Secret or ConfigMap.
type ref struct {
	kind string // "Secret" or "ConfigMap"
	types.NamespacedName
}

func (r ref) indexKey() string { return r.kind + "/" + r.Namespace + "/" + r.Name }

func (r ref) namespaceKey() string { return r.kind + "/" + r.Namespace }

// coreRef returns the reference to a core Secret or ConfigMap; ok is false
// for references to other groups and kinds. kind defaults to defaultKind.
func coreRef(group *gatewayv1.Group, kind *gatewayv1.Kind, defaultKind string, ns *gatewayv1.Namespace, name gatewayv1.ObjectName, from string) (ref, bool) {
	k := defaultKind
	if kind != nil {
		k = string(*kind)
	}
	if (group != nil && *group != "") || (k != "Secret" && k != "ConfigMap") {
		return ref{}, false
	}
	r := ref{kind: k, NamespacedName: types.NamespacedName{Namespace: from, Name: string(name)}}
	if ns != nil && *ns != "" {
		r.Namespace = string(*ns)
	}
	return r, true
}

// gatewayRefs returns the Secrets and ConfigMaps gw references: listener
// certificates, the backend client certificate and the frontend CA
// certificates.
func gatewayRefs(gw *gatewayv1.Gateway) []ref {
	var out []ref
	add := func(r ref, ok bool) {
		if ok && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, l := range gw.Spec.Listeners {
		if l.TLS == nil {
			continue
		}
		for _, c := range l.TLS.CertificateRefs {
			add(coreRef(c.Group, c.Kind, "Secret", c.Namespace, c.Name, gw.Namespace))
		}
	}
	tls := gw.Spec.TLS
	if tls == nil {
		return out
	}
	if b := tls.Backend; b != nil && b.ClientCertificateRef != nil {
		c := b.ClientCertificateRef
		add(coreRef(c.Group, c.Kind, "Secret", c.Namespace, c.Name, gw.Namespace))
	}
	if f := tls.Frontend; f != nil {
		configs := []gatewayv1.TLSConfig{f.Default}
		for _, p := range f.PerPort {
			configs = append(configs, p.TLS)
		}
		for _, c := range configs {
			if c.Validation == nil {
				continue
			}
			for _, r := range c.Validation.CACertificateRefs {
				g, k := r.Group, r.Kind
				add(coreRef(&g, &k, "", r.Namespace, r.Name, gw.Namespace))
			}
		}
	}
	return out
}

// policyRefs returns the CA certificates a BackendTLSPolicy references, in
// its own namespace.
func policyRefs(p *gatewayv1.BackendTLSPolicy) []ref {
	var out []ref
	for _, r := range p.Spec.Validation.CACertificateRefs {
		g, k := r.Group, r.Kind
		if x, ok := coreRef(&g, &k, "", nil, r.Name, p.Namespace); ok && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// refsOf returns the references of a Gateway, a ListenerSet or a
// BackendTLSPolicy.
func refsOf(obj client.Object) []ref {
	switch o := obj.(type) {
	case *gatewayv1.Gateway:
		return gatewayRefs(o)
	case *gatewayv1.BackendTLSPolicy:
		return policyRefs(o)
	case *gatewayv1.ListenerSet:
		return listenerSetRefs(o)
	}
	return nil
}

// indexRefs is the refIndex function.
func indexRefs(obj client.Object) []string {
	var out []string
	for _, r := range refsOf(obj) {
		out = append(out, r.indexKey())
		if !slices.Contains(out, r.namespaceKey()) {
			out = append(out, r.namespaceKey())
		}
	}
	return out
}

// refsChanged passes creations, deletions and the updates that change the
// references: a Gateway's status write does not fetch its Secrets again.
var refsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !slices.Equal(refsOf(e.ObjectOld), refsOf(e.ObjectNew))
	},
}

// referenced reports whether r is referenced by a Gateway of its namespace,
// by a Gateway of another namespace that a ReferenceGrant in r's namespace
// allows to, or by a BackendTLSPolicy (which references its own namespace
// only).
func (p *Provider) referenced(ctx context.Context, c client.Reader, s served, r ref) (bool, error) {
	var gws gatewayv1.GatewayList
	if err := c.List(ctx, &gws, client.MatchingFields{refIndex: r.indexKey()}); err != nil {
		return false, err
	}
	for i := range gws.Items {
		from := gws.Items[i].Namespace
		if from == r.Namespace {
			return true, nil
		}
		ok, err := granted(ctx, c, s, "Gateway", from, r)
		if ok || err != nil {
			return ok, err
		}
	}
	if ok, err := listenerSetReferenced(ctx, c, s, r); ok || err != nil {
		return ok, err
	}
	if !s.has("BackendTLSPolicy") {
		return false, nil
	}
	var policies gatewayv1.BackendTLSPolicyList
	if err := c.List(ctx, &policies, client.InNamespace(r.Namespace), client.MatchingFields{refIndex: r.indexKey()}); err != nil {
		return false, err
	}
	return len(policies.Items) > 0, nil
}

// granted reports whether a ReferenceGrant in r's namespace lets objects of
// kind (Gateway, ListenerSet) of namespace from reference r.
func granted(ctx context.Context, c client.Reader, s served, kind, from string, r ref) (bool, error) {
	if !s.has("ReferenceGrant") {
		return false, nil
	}
	var grants gatewayv1.ReferenceGrantList
	if err := c.List(ctx, &grants, client.InNamespace(r.Namespace)); err != nil {
		return false, err
	}
	for _, g := range grants.Items {
		fromOK := slices.ContainsFunc(g.Spec.From, func(f gatewayv1.ReferenceGrantFrom) bool {
			return f.Group == gatewayv1.GroupName && string(f.Kind) == kind && string(f.Namespace) == from
		})
		toOK := slices.ContainsFunc(g.Spec.To, func(t gatewayv1.ReferenceGrantTo) bool {
			return t.Group == "" && string(t.Kind) == r.kind && (t.Name == nil || string(*t.Name) == r.Name)
		})
		if fromOK && toOK {
			return true, nil
		}
	}
	return false, nil
}

// requestsOf returns the reconcile requests of the references of kind that
// obj (a Gateway, a ListenerSet or a BackendTLSPolicy) makes.
func requestsOf(kind string, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, r := range refsOf(obj) {
		if r.kind == kind {
			out = append(out, reconcile.Request{NamespacedName: r.NamespacedName})
		}
	}
	return out
}

// grantRequests returns the reconcile requests of the objects of kind whose
// grant may have changed with the ReferenceGrant g: those it names, or every
// object of kind referenced in its namespace when an entry names none.
func grantRequests(ctx context.Context, c client.Reader, kind string, g *gatewayv1.ReferenceGrant) []reconcile.Request {
	var out []reconcile.Request
	all := false
	for _, t := range g.Spec.To {
		switch {
		case t.Group != "" || string(t.Kind) != kind:
		case t.Name == nil:
			all = true
		default:
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: g.Namespace, Name: string(*t.Name)}})
		}
	}
	if !all {
		return out
	}
	out = append(out, listenerSetGrantRequests(ctx, c, kind, g.Namespace)...)
	var gws gatewayv1.GatewayList
	if err := c.List(ctx, &gws, client.MatchingFields{refIndex: kind + "/" + g.Namespace}); err != nil {
		return out // the cache is stopping
	}
	for i := range gws.Items {
		for _, r := range requestsOf(kind, &gws.Items[i]) {
			if r.Namespace == g.Namespace {
				out = append(out, r)
			}
		}
	}
	return out
}
