package kube_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/kube"
)

// TestEveryKindIsPublished creates one object of every kind and checks its
// key, then its updates and deletions.
func TestEveryKindIsPublished(t *testing.T) {
	h := newHarness(t)
	ns := h.ns
	ours, theirs := h.class(controllerName), h.class("example.com/other")
	h.create(ours, theirs,
		gateway(ns, "gw", ours.Name), httpRoute(ns, "web", "gw"), grpcRoute(ns, "grpc", "gw"),
		tlsRoute(ns, "tls", "gw"), tcpRoute(ns, "tcp", "gw"), udpRoute(ns, "udp", "gw"),
		service(ns, "backend"), endpointSlice(ns, "backend-1", "backend"),
		grant(ns, "grant", "elsewhere", ""), backendTLSPolicy(ns, "policy", "backend", "ca"))
	h.start(h.options())
	for _, key := range []string{
		bus.ResourceKey("GatewayClass", "", ours.Name), bus.ResourceKey("Namespace", "", ns),
		bus.ResourceKey("Gateway", ns, "gw"), bus.ResourceKey("HTTPRoute", ns, "web"),
		bus.ResourceKey("GRPCRoute", ns, "grpc"), bus.ResourceKey("TLSRoute", ns, "tls"),
		bus.ResourceKey("TCPRoute", ns, "tcp"), bus.ResourceKey("UDPRoute", ns, "udp"),
		bus.ResourceKey("Service", ns, "backend"), bus.ResourceKey("EndpointSlice", ns, "backend-1"),
		bus.ResourceKey("ReferenceGrant", ns, "grant"), bus.ResourceKey("BackendTLSPolicy", ns, "policy"),
	} {
		h.published(key, nil)
	}
	if res := h.resource(bus.ResourceKey("GatewayClass", "", theirs.Name)); res != nil {
		t.Errorf("a GatewayClass of another controller is published: %v", res)
	}

	live := h.checkGatewayResource(ns, "gw")
	key := bus.ResourceKey("Gateway", ns, "gw")

	// An update of the spec is published with the new generation.
	live.Spec.Listeners[0].Port = 8080
	if err := h.c.Update(h.ctx, live); err != nil {
		t.Fatal(err)
	}
	h.published(key, func(r *busv1.Resource) bool { return r.Generation == 2 && r.ResourceVersion == live.ResourceVersion })

	// Deletions delete the keys; a class handed to another controller too.
	for _, o := range []client.Object{httpRoute(ns, "web"), udpRoute(ns, "udp", "gw"), endpointSlice(ns, "backend-1", "")} {
		if err := h.c.Delete(h.ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	h.gone(bus.ResourceKey("HTTPRoute", ns, "web"))
	h.gone(bus.ResourceKey("UDPRoute", ns, "udp"))
	h.gone(bus.ResourceKey("EndpointSlice", ns, "backend-1"))
	if err := h.c.Delete(h.ctx, ours); err != nil {
		t.Fatal(err)
	}
	h.gone(bus.ResourceKey("GatewayClass", "", ours.Name))
}

// checkGatewayResource checks what is published for Gateway ns/name, and
// returns the live Gateway.
func (h *harness) checkGatewayResource(ns, name string) *gatewayv1.Gateway {
	h.t.Helper()
	t := h.t
	live := h.get(ns, name, &gatewayv1.Gateway{}).(*gatewayv1.Gateway)
	res := h.published(bus.ResourceKey("Gateway", ns, name), nil)
	want := &busv1.Resource{
		Group: gatewayv1.GroupName, Version: "v1", Kind: "Gateway", Namespace: ns, Name: name,
		Uid: string(live.UID), Generation: 1, ResourceVersion: live.ResourceVersion, Origin: kube.Origin,
	}
	if res.Group != want.Group || res.Version != want.Version || res.Kind != want.Kind || res.Namespace != want.Namespace ||
		res.Name != want.Name || res.Uid != want.Uid || res.Generation != want.Generation ||
		res.ResourceVersion != want.ResourceVersion || res.Origin != want.Origin {
		t.Errorf("Gateway resource:\n got %v\nwant %v (and the object)", res, want)
	}
	obj := object(t, res)
	meta := obj["metadata"].(map[string]any)
	if obj["apiVersion"] != "gateway.networking.k8s.io/v1" || obj["kind"] != "Gateway" || obj["status"] != nil ||
		meta["managedFields"] != nil || meta["uid"] != string(live.UID) {
		t.Errorf("Gateway object: %s", res.Object)
	}
	return live
}

// TestStatusWritesPublishNothing checks that a status write, which changes
// an object's resourceVersion only, publishes nothing.
func TestStatusWritesPublishNothing(t *testing.T) {
	h := newHarness(t)
	h.create(httpRoute(h.ns, "web", "gw"))
	h.start(h.options())
	key := bus.ResourceKey("HTTPRoute", h.ns, "web")
	before := h.published(key, nil)
	changes := h.watchResources()
	var route gatewayv1.HTTPRoute
	if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "web"}, &route); err != nil {
		t.Fatal(err)
	}
	route.Status.Parents = []gatewayv1.RouteParentStatus{liveParent("example.com/other", h.ns, "gw")}
	if err := h.c.Status().Update(h.ctx, &route); err != nil {
		t.Fatal(err)
	}
	if got := changes(2 * time.Second); len(got) != 0 {
		t.Errorf("a status write published %v", got)
	}
	if after := h.resource(key); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("resourceVersion published %s, want the one before the status write, %s", after.ResourceVersion, before.ResourceVersion)
	}
}

// watchResources starts following the resources bucket; the function it
// returns waits d and returns the keys that changed since.
func (h *harness) watchResources() func(d time.Duration) []string {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.ctx)
	w, err := h.bus.Watch(ctx, bus.Resources, ">")
	if err != nil {
		h.t.Fatal(err)
	}
	for e := range w.Updates() { // skip the initial values
		if e == nil {
			break
		}
	}
	return func(d time.Duration) []string {
		defer cancel()
		var keys []string
		deadline := time.After(d)
		for {
			select {
			case e, ok := <-w.Updates():
				if !ok {
					return keys
				}
				keys = append(keys, e.Key+" "+e.Op.String())
			case <-deadline:
				return keys
			}
		}
	}
}

func TestResyncRemovesStaleKeysOnly(t *testing.T) {
	h := newHarness(t)
	h.create(service(h.ns, "backend"))
	stale := bus.ResourceKey("HTTPRoute", h.ns, "gone")
	fromFile := bus.ResourceKey("HTTPRoute", h.ns, "from-file")
	for key, origin := range map[string]string{stale: kube.Origin, fromFile: "file:routes.yaml:1"} {
		if _, err := h.bus.Put(h.ctx, bus.Resources, key, &busv1.Resource{Kind: "HTTPRoute", Object: []byte(`{"metadata":{}}`), Origin: origin}); err != nil {
			t.Fatal(err)
		}
	}
	p := h.start(h.options())
	if h.resource(stale) != nil {
		t.Errorf("the stale key %s is still there once the provider is ready", stale)
	}
	if h.resource(fromFile) == nil {
		t.Errorf("the key %s of another origin was deleted", fromFile)
	}
	svc := bus.ResourceKey("Service", h.ns, "backend")
	first := h.published(svc, nil)
	e, err := h.bus.Get(h.ctx, bus.Resources, svc)
	if err != nil {
		t.Fatal(err)
	}
	// A restart over the same cluster rewrites nothing but its sync marks,
	// SYNCING then SYNCED.
	p.stop()
	changes := h.watchResources()
	h.start(h.options())
	syncKey := bus.SyncKey("kubernetes")
	if got := changes(time.Second); !slices.Equal(got, []string{syncKey + " put", syncKey + " put"}) {
		t.Errorf("a restart over an unchanged cluster wrote %v, want its two sync marks", got)
	}
	again, err := h.bus.Get(h.ctx, bus.Resources, svc)
	if err != nil || again.Revision != e.Revision || again.Value.(*busv1.Resource).ResourceVersion != first.ResourceVersion {
		t.Errorf("after a restart, %s is at revision %d (err %v), want %d", svc, again.Revision, err, e.Revision)
	}
}

func TestNamespacesRestrictWhatIsPublished(t *testing.T) {
	h := newHarness(t)
	other := cluster.Namespace(t, "other")
	h.create(service(h.ns, "in"), service(other, "out"))
	h.start(h.options(h.ns))
	h.published(bus.ResourceKey("Service", h.ns, "in"), nil)
	h.published(bus.ResourceKey("Namespace", "", h.ns), nil)
	keys, err := h.bus.Keys(h.ctx, bus.Resources, ">")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		kind, ns, name, _ := bus.ParseResourceKey(key)
		if ns == other || (kind == "Namespace" && name != h.ns) {
			t.Errorf("%s is published, but only namespace %s is watched", key, h.ns)
		}
	}
}

// TestMissingCRDIsSkipped removes the UDPRoute CRD: the provider reports it
// once and publishes everything else.
func TestMissingCRDIsSkipped(t *testing.T) {
	h := newHarness(t)
	h.removeCRD("udproutes")
	h.create(service(h.ns, "backend"))
	p := h.start(h.options())
	h.published(bus.ResourceKey("Service", h.ns, "backend"), nil)
	lines := p.logs.JSONLines("kind not served by the cluster; not watched until the provider restarts")
	if len(lines) != 1 || lines[0]["kind"] != "UDPRoute" {
		t.Errorf("reports of kinds not served: %v; want one, of UDPRoute", lines)
	}
}

// removeCRD deletes the Gateway API CRD of resource (e.g. "udproutes") and
// installs it again when the test ends.
func (h *harness) removeCRD(resource string) {
	h.t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: objectMeta("", resource+"."+gatewayv1.GroupName)}
	if err := h.c.Delete(h.ctx, crd); err != nil {
		h.t.Fatal(err)
	}
	h.eventually("the CRD "+crd.Name+" is gone", func() bool {
		return apierrors.IsNotFound(h.c.Get(h.ctx, client.ObjectKeyFromObject(crd), crd))
	})
	h.t.Cleanup(func() {
		if err := cluster.InstallCRDs(filepath.Join(cluster.CRDs[0], "gateway.networking.k8s.io_"+resource+".yaml")); err != nil {
			h.t.Error(err)
		}
	})
}
