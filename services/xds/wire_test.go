package xds

import (
	"bytes"
	"fmt"
	"testing"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// named is a marshalled message whose field 1 is name, padded to size.
func named(name string, size int) []byte {
	b := protowire.AppendTag(nil, resourceNameField, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	return protowire.AppendBytes(b, bytes.Repeat([]byte{'x'}, max(0, size-len(b)-4)))
}

// TestBigValuesOnTheWire builds a type whose resources are smaller and
// bigger than bigValue, whose big values the body refers to rather than
// copies, and checks that the state-of-the-world response, a subset of it
// and a delta response decode to the resources in order, each at its
// version, and that the body shares the big values' bytes.
func TestBigValuesOnTheWire(t *testing.T) {
	var anys []*anypb.Any
	var versions []string
	for i, size := range []int{40, bigValue + 2, 90, 3 * bigValue, bigValue - 1, 2 * bigValue} {
		anys = append(anys, &anypb.Any{TypeUrl: resource.RouteType, Value: named(fmt.Sprintf("rc-%d", i), size)})
		versions = append(versions, fmt.Sprintf("v%d", i))
	}
	ts, err := buildTypeSnap(resource.RouteType, "7", anys, versions, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same resources, each in three parts with no value of its own.
	var empty []*anypb.Any
	var parts []*busv1.ResourceParts
	for _, a := range anys {
		v := a.GetValue()
		empty = append(empty, &anypb.Any{TypeUrl: a.GetTypeUrl()})
		parts = append(parts, &busv1.ResourceParts{Parts: [][]byte{v[:len(v)/3], v[len(v)/3 : len(v)/2], v[len(v)/2:]}})
	}
	inParts, err := buildTypeSnap(resource.RouteType, "7", empty, versions, parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := wire(inParts.body).appendTo(nil), ts.body.appendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("the body of the resources in parts differs from the body of their values")
	}
	shared, big := 0, 0
	for _, a := range anys {
		if len(a.GetValue()) >= bigValue {
			big++
		}
	}
	for _, p := range ts.body {
		for _, a := range anys {
			if len(p) > 0 && &p[0] == &a.GetValue()[0] {
				shared++
			}
		}
	}
	if shared != big || big != 3 {
		t.Errorf("the body shares %d values, want the %d of at least %d bytes", shared, big, bigValue)
	}
	sotw := func(e *encoded) *discovery.DiscoveryResponse {
		t.Helper()
		var resp discovery.DiscoveryResponse
		if err := proto.Unmarshal(e.bufs.Materialize(), &resp); err != nil {
			t.Fatal(err)
		}
		return &resp
	}
	resp := sotw(sotwResponse(ts.body, "n1"))
	if resp.GetVersionInfo() != "7" || resp.GetNonce() != "n1" || resp.GetTypeUrl() != resource.RouteType || len(resp.GetResources()) != len(anys) {
		t.Fatalf("response = version %q, nonce %q, type %q, %d resources", resp.GetVersionInfo(), resp.GetNonce(), resp.GetTypeUrl(), len(resp.GetResources()))
	}
	for i, a := range resp.GetResources() {
		if !proto.Equal(a, anys[i]) {
			t.Errorf("resource %d differs", i)
		}
	}
	sub := sotw(sotwResponse(subsetBody(ts, []int32{1, 4}), "n2"))
	if len(sub.GetResources()) != 2 || !proto.Equal(sub.GetResources()[0], anys[1]) || !proto.Equal(sub.GetResources()[1], anys[4]) {
		t.Errorf("subset = %d resources, want resources 1 and 4", len(sub.GetResources()))
	}
	var delta discovery.DeltaDiscoveryResponse
	if err := proto.Unmarshal(deltaResponse(ts, []int32{0, 3}, []string{"gone"}, "n3").bufs.Materialize(), &delta); err != nil {
		t.Fatal(err)
	}
	if len(delta.GetResources()) != 2 || delta.GetNonce() != "n3" || len(delta.GetRemovedResources()) != 1 {
		t.Fatalf("delta = %d resources, nonce %q, removed %v", len(delta.GetResources()), delta.GetNonce(), delta.GetRemovedResources())
	}
	for k, i := range []int{0, 3} {
		r := delta.GetResources()[k]
		if r.GetName() != fmt.Sprintf("rc-%d", i) || r.GetVersion() != versions[i] || !proto.Equal(r.GetResource(), anys[i]) {
			t.Errorf("delta resource %d = %q at %q", k, r.GetName(), r.GetVersion())
		}
	}
}
