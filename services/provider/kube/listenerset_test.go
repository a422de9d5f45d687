package kube_test

import (
	"slices"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// listenerSet returns a ListenerSet of Gateway ns/gw with one HTTP
// listener.
func listenerSet(ns, name, gw string) *gatewayv1.ListenerSet {
	return &gatewayv1.ListenerSet{
		ObjectMeta: objectMeta(ns, name),
		Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Name: gatewayv1.ObjectName(gw)},
			Listeners: []gatewayv1.ListenerEntry{{Name: "extra", Port: 8080, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
}

// listenerSetEntry is what the translator writes for ListenerSet ns/name of
// Gateway ns/gw.
func listenerSetEntry(ns, name, gw string) *busv1.Status {
	return &busv1.Status{
		Object:             &busv1.ObjectRef{Group: gatewayv1.GroupName, Kind: "ListenerSet", Namespace: ns, Name: name},
		Gateway:            &busv1.ObjectRef{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: ns, Name: gw},
		ObservedGeneration: 1,
		Conditions:         []*busv1.Condition{condition("Accepted", "True", "Accepted"), condition("Programmed", "True", "Programmed")},
		Listeners: []*busv1.ListenerStatus{{
			Name: "extra", AttachedRoutes: 2,
			SupportedKinds: []*busv1.RouteGroupKind{{Group: gatewayv1.GroupName, Kind: "HTTPRoute"}},
			Conditions:     []*busv1.Condition{condition("Accepted", "True", "Accepted"), condition("Programmed", "True", "Programmed")},
		}},
	}
}

// TestListenerSetIsPublishedAndItsStatusWritten: a ListenerSet is
// published like the other kinds; its translator entry becomes its status
// (conditions and listeners), and the Gateway's entry its
// status.attachedListenerSets.
func TestListenerSetIsPublishedAndItsStatusWritten(t *testing.T) {
	h := newHarness(t)
	ns := h.ns
	ours := h.class(controllerName)
	gw := gateway(ns, "gw", ours.Name)
	gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: new(gatewayv1.NamespacesFromSame)}}
	h.create(ours, gw, listenerSet(ns, "ls", "gw"))
	opts := h.options()
	opts.LeaderElection = false
	h.start(opts)

	res := h.published(bus.ResourceKey("ListenerSet", ns, "ls"), nil)
	if obj := object(t, res); res.Version != "v1" || obj["kind"] != "ListenerSet" || obj["status"] != nil {
		t.Errorf("ListenerSet resource %v: %s", res, res.Object)
	}

	gwEntry := gatewayEntry(ns, "gw", "True")
	gwEntry.AttachedListenerSets = new(int32(1))
	h.putStatus(bus.StatusKey("Gateway", ns, "gw", ns, "gw"), gwEntry)
	h.putStatus(bus.StatusKey("ListenerSet", ns, "ls", ns, "gw"), listenerSetEntry(ns, "ls", "gw"))
	h.eventually("the ListenerSet is Accepted and Programmed, with its listener", func() bool {
		ls := h.get(ns, "ls", &gatewayv1.ListenerSet{}).(*gatewayv1.ListenerSet)
		a, p := conditionOf(ls.Status.Conditions, "Accepted"), conditionOf(ls.Status.Conditions, "Programmed")
		return a != nil && a.Status == "True" && a.ObservedGeneration == 1 && p != nil && p.Status == "True" &&
			len(ls.Status.Listeners) == 1 && ls.Status.Listeners[0].AttachedRoutes == 2 &&
			conditionOf(ls.Status.Listeners[0].Conditions, "Programmed") != nil
	})
	h.eventually("the Gateway counts one attached ListenerSet", func() bool {
		st := h.get(ns, "gw", &gatewayv1.Gateway{}).(*gatewayv1.Gateway).Status
		return st.AttachedListenerSets != nil && *st.AttachedListenerSets == 1
	})

	if err := h.c.Delete(h.ctx, listenerSet(ns, "ls", "gw")); err != nil {
		t.Fatal(err)
	}
	h.gone(bus.ResourceKey("ListenerSet", ns, "ls"))
}

// TestListenerSetSecretsArePublished: the certificate Secrets of a
// ListenerSet's listeners are published like a Gateway's: those of its own
// namespace at once, those of another namespace once a ReferenceGrant
// allows ListenerSets of its namespace (a grant to Gateways does not).
func TestListenerSetSecretsArePublished(t *testing.T) {
	h := newHarness(t)
	certs := cluster.Namespace(t, "certs")
	ours := h.class(controllerName)
	ls := listenerSet(h.ns, "ls", "gw")
	ls.Spec.Listeners = append(ls.Spec.Listeners, gatewayv1.ListenerEntry{
		Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{secretRef("", "own"), secretRef(certs, "shared")}},
	})
	h.create(ours, gateway(h.ns, "gw", ours.Name), secret(h.ns, "own", "v1"), secret(certs, "shared", "v1"),
		grant(certs, "gateways", h.ns, ""), ls)
	h.start(h.options(h.ns, certs))
	h.published(bus.ResourceKey("Secret", h.ns, "own"), nil)
	key := bus.ResourceKey("Secret", certs, "shared")
	changes := h.watchResources()
	if got := changes(quiet); slices.Contains(got, key+" put") || h.resource(key) != nil {
		t.Fatalf("%s is published with a grant to Gateways only", key)
	}
	g := grant(certs, "listenersets", h.ns, "")
	g.Spec.From[0].Kind = "ListenerSet"
	h.create(g)
	h.published(key, nil)
	h.setCert(certs, "shared", "v2")
	h.published(key, func(r *busv1.Resource) bool { return certOf(t, r) == "v2" })
	if err := h.c.Delete(h.ctx, g); err != nil {
		t.Fatal(err)
	}
	h.gone(key)
}
