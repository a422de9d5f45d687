package resources

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

// TestCompactSlice checks that the index keeps of an EndpointSlice what the
// translation reads (identity, address type, ports, addresses and
// readiness) and drops the rest.
func TestCompactSlice(t *testing.T) {
	x := NewIndex()
	apply(t, x, `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: s1, namespace: app,
  labels: {kubernetes.io/service-name: svc, team: a}, annotations: {note: x}},
  addressType: IPv4, ports: [{name: http, port: 8080, protocol: TCP}],
  endpoints: [
    {addresses: [10.0.0.1], conditions: {ready: true, serving: true, terminating: false}, nodeName: n1, zone: z1,
     hostname: h1, targetRef: {kind: Pod, name: p1, namespace: app}},
    {addresses: [10.0.0.2, 10.0.0.3], conditions: {ready: false}},
    {addresses: [10.0.0.4]}]}`)
	got := x.EndpointSlicesFor(nn("app", "svc"))
	if len(got) != 1 {
		t.Fatalf("EndpointSlicesFor = %v, want one slice", got)
	}
	s := got[0]
	want := &discoveryv1.EndpointSlice{
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{Addresses: []string{"10.0.0.2", "10.0.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
			{Addresses: []string{"10.0.0.4"}},
		},
	}
	want.Namespace, want.Name, want.Generation, want.UID = "app", "s1", s.Generation, s.UID
	if !reflect.DeepEqual(s, want) {
		t.Errorf("kept %+v\nwant %+v", s, want)
	}
	for i, ep := range s.Endpoints {
		if cap(ep.Addresses) != len(ep.Addresses) {
			t.Errorf("endpoint %d: addresses of capacity %d for %d", i, cap(ep.Addresses), len(ep.Addresses))
		}
	}
	if cap(s.Endpoints) != len(s.Endpoints) || cap(s.Ports) != len(s.Ports) {
		t.Errorf("endpoints of capacity %d for %d, ports %d for %d", cap(s.Endpoints), len(s.Endpoints), cap(s.Ports), len(s.Ports))
	}
}
