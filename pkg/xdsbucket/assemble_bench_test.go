package xdsbucket_test

import (
	"fmt"
	"testing"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// BenchmarkAssembleRouteEdit is what the xds service does for one edited
// virtual host of a gateway with one route configuration of N virtual
// hosts and N clusters: the commit of the set and its assembly in parts.
func BenchmarkAssembleRouteEdit(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			set, put := setInParts(b)
			for i := range n {
				put(numberedHost(i, 0))
				put(&busv1.XdsResource{TypeUrl: xdsbucket.ClusterType, Name: fmt.Sprintf("c%05d", i), Value: vhost(fmt.Sprint(i))})
			}
			if _, err := set.Assemble(set.Commit("default/gw", 0)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				put(numberedHost(n/2, i+1))
				if _, err := set.Assemble(set.Commit("default/gw", uint64(i+1))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// setInParts is a Set that assembles in parts, holding the shell of route
// configuration http-80, and a put that fails tb on an error.
func setInParts(tb testing.TB) (*xdsbucket.Set, func(*busv1.XdsResource)) {
	set := xdsbucket.NewSetInParts()
	put := func(r *busv1.XdsResource) {
		if _, _, err := set.Put(r); err != nil {
			tb.Fatal(err)
		}
	}
	put(&busv1.XdsResource{TypeUrl: xdsbucket.RouteType, Name: "http-80", Value: message("http-80", nil, 1)})
	return set, put
}

// numberedHost is virtual host i of http-80 at revision rev, of about 430
// bytes.
func numberedHost(i, rev int) *busv1.XdsResource {
	name := fmt.Sprintf("h%05d.example.com", i)
	return &busv1.XdsResource{TypeUrl: xdsbucket.VirtualHostType, Name: name, RouteConfiguration: "http-80",
		Order: name, Value: vhost(fmt.Sprintf("%s-%d-%0400d", name, rev, 0))}
}
