package translator

import (
	"encoding/json"
	"slices"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"google.golang.org/protobuf/proto"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// An EndpointSlice change on one backend of a weighted UDPRoute updates the
// load assignment of the listener's combined cluster, which holds the
// endpoints of all its backends, exactly as a new translation does.
func TestEndpointChangeOfWeightedUDPRoute(t *testing.T) {
	rs := decodeFile(t, "testdata/udproute/weighted.in.yaml")
	idx := resources.NewIndex()
	var slice *busv1.Resource
	for _, r := range rs {
		if _, err := idx.Apply(r); err != nil {
			t.Fatal(err)
		}
		if r.GetKind() == resources.KindEndpointSlice && r.GetName() == "dns-b-1" {
			slice = r
		}
	}
	gw := types.NamespacedName{Namespace: "default", Name: "eg"}
	x := newTranslator(idx, gatewayclass.DefaultControllerName)
	before := loadAssignment(t, inline(t, x.translate(gw)).XDS, "udp-53/weighted")

	var s discoveryv1.EndpointSlice
	if err := json.Unmarshal(slice.GetObject(), &s); err != nil {
		t.Fatal(err)
	}
	s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.4.2"}})
	next := proto.CloneOf(slice)
	var err error
	if next.Object, err = json.Marshal(&s); err != nil {
		t.Fatal(err)
	}
	if _, err := idx.Apply(next); err != nil {
		t.Fatal(err)
	}

	got := inline(t, x.translate(gw))
	want := Translate(idx, gatewayclass.DefaultControllerName, gw)
	checkSameOutput(t, "after dns-b's EndpointSlice changed", got, want)
	after := loadAssignment(t, got.XDS, "udp-53/weighted")
	if !proto.Equal(after, loadAssignment(t, want.XDS, "udp-53/weighted")) {
		t.Errorf("combined load assignment %v, a new translation gives %v", after, loadAssignment(t, want.XDS, "udp-53/weighted"))
	}
	if proto.Equal(before, after) {
		t.Fatal("the combined load assignment did not change")
	}
	var addrs []string
	for _, loc := range after.GetEndpoints() {
		if loc.GetLocality().GetSubZone() != "default/dns-b/53/udp" {
			continue
		}
		for _, e := range loc.GetLbEndpoints() {
			addrs = append(addrs, e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress())
		}
	}
	if !slices.Equal(addrs, []string{"10.0.4.1", "10.0.4.2"}) {
		t.Errorf("dns-b's locality of the combined load assignment has %q, want 10.0.4.1 and 10.0.4.2", addrs)
	}
}

// loadAssignment returns the ClusterLoadAssignment of cluster name in
// snap.
func loadAssignment(t *testing.T, snap *busv1.XdsSnapshot, name string) *endpointv3.ClusterLoadAssignment {
	t.Helper()
	for _, typed := range snap.GetResources() {
		if typed.GetTypeUrl() != resourcev3.EndpointType {
			continue
		}
		for _, a := range typed.GetResources() {
			cla := &endpointv3.ClusterLoadAssignment{}
			if err := a.UnmarshalTo(cla); err != nil {
				t.Fatal(err)
			}
			if cla.GetClusterName() == name {
				return cla
			}
		}
	}
	t.Fatalf("snapshot %s has no load assignment %s", snap.GetVersion(), name)
	return nil
}
