package translator

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"google.golang.org/protobuf/proto"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// Following an EndpointSlice change incrementally (the translator reuses
// what did not change) gives exactly what a new translation gives, on
// every golden case.
func TestEndpointChangesEqualTranslate(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases in testdata: %v", err)
	}
	updated := 0
	for _, in := range cases {
		rs := decodeFile(t, in)
		idx := resources.NewIndex()
		for _, r := range rs {
			if _, err := idx.Apply(r); err != nil {
				t.Fatalf("%s: %v", in, err)
			}
		}
		x := newTranslator(idx, gatewayclass.DefaultControllerName)
		gateways := idx.Gateways()
		for _, gw := range gateways {
			x.translate(gw)
		}
		slices := 0
		for round := range 3 {
			for _, r := range rs {
				if r.GetKind() == resources.KindEndpointSlice {
					applySlice(t, idx, r, round)
					slices++
				}
			}
			for _, gw := range gateways {
				got := x.translate(gw)
				if got == nil {
					continue
				}
				if slices > 0 {
					updated++
				}
				checkSameOutput(t, fmt.Sprintf("%s %s round %d", in, gw, round), inline(t, got), Translate(idx, gatewayclass.DefaultControllerName, gw))
			}
		}
	}
	if updated == 0 {
		t.Fatal("no golden case has endpoints to update")
	}
}

// inline is out with its xDS resources inline, as Translate gives them.
func inline(t testing.TB, out *Output) *Output {
	t.Helper()
	if out == nil || out.Build == nil {
		return out
	}
	snap, err := out.Build.Set.Assemble(out.Build.Commit)
	if err != nil {
		t.Fatal(err)
	}
	o := *out
	o.XDS = snap
	return &o
}

func checkSameOutput(t *testing.T, what string, got, want *Output) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case want == nil:
		t.Errorf("%s: translated a gateway that has no translation", what)
	case got == nil:
		t.Errorf("%s: no translation, a new translation has one", what)
	case (got.XDSError == nil) != (want.XDSError == nil):
		t.Errorf("%s: xDS error %v, a new translation has %v", what, got.XDSError, want.XDSError)
	case !proto.Equal(got.IR, want.IR):
		t.Errorf("%s: IR differs from a new translation", what)
	case !proto.Equal(got.XDS, want.XDS):
		t.Errorf("%s: xDS snapshot (version %s) differs from a new translation (version %s)", what, got.XDS.GetVersion(), want.XDS.GetVersion())
	case !proto.Equal(got.Proxy, want.Proxy):
		t.Errorf("%s: proxy differs from a new translation", what)
	case len(got.Statuses) != len(want.Statuses):
		t.Errorf("%s: %d statuses, a new translation has %d", what, len(got.Statuses), len(want.Statuses))
	default:
		for i := range got.Statuses {
			if !proto.Equal(got.Statuses[i], want.Statuses[i]) {
				t.Errorf("%s: status %d differs from a new translation", what, i)
			}
		}
	}
}

func decodeFile(t testing.TB, file string) []*busv1.Resource {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := resourcestest.DecodeAll(strings.NewReader(string(data)), file)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// applySlice applies a variant of the EndpointSlice r to idx: round 0 adds
// an address, round 1 also marks the first endpoint not ready, round 2
// takes every endpoint away.
func applySlice(t testing.TB, idx *resources.Index, r *busv1.Resource, round int) {
	t.Helper()
	var s discoveryv1.EndpointSlice
	if err := json.Unmarshal(r.GetObject(), &s); err != nil {
		t.Fatal(err)
	}
	notReady := false
	switch round {
	case 0:
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.250.0.1"}})
	case 1:
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.250.0.1"}})
		if len(s.Endpoints) > 0 {
			s.Endpoints[0].Conditions.Ready = &notReady
		}
	default:
		s.Endpoints = nil
	}
	obj, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	next := proto.CloneOf(r)
	next.Object = obj
	if _, err := idx.Apply(next); err != nil {
		t.Fatal(err)
	}
}

// endpointChange is a gateway of n routes and one of its EndpointSlices,
// for measuring the ways of following a change of it.
func endpointChange(tb testing.TB, routes int) (*resources.Index, types.NamespacedName, *busv1.Resource) {
	tb.Helper()
	idx := benchIndex(tb, routes)
	rs, err := manifest.ReadResources(strings.NewReader(gatewaytest.TenantBackends("bench", 0)), "bench")
	if err != nil {
		tb.Fatal(err)
	}
	return idx, types.NamespacedName{Namespace: "bench", Name: "eg"}, rs[1]
}

// Following an endpoint change incrementally allocates a fraction of what
// a new translation does (allocations, unlike time, do not depend on the
// machine).
func TestEndpointChangeIsCheaper(t *testing.T) {
	idx, gw, slice := endpointChange(t, 50)
	x := newTranslator(idx, gatewayclass.DefaultControllerName)
	x.translate(gw)
	round := 0
	next := func() {
		round++
		applySlice(t, idx, slice, round%2)
	}
	full := testing.AllocsPerRun(20, func() {
		next()
		_ = Translate(idx, gatewayclass.DefaultControllerName, gw)
	})
	incremental := testing.AllocsPerRun(20, func() {
		next()
		if out := x.translate(gw); out == nil || out.RoutesBuilt != 1 {
			t.Fatalf("the endpoint change translated %v routes again, want 1", out)
		}
	})
	if incremental*4 > full {
		t.Errorf("an endpoint update allocates %.0f times, a translation %.0f: want a quarter at most", incremental, full)
	}
	t.Logf("allocations: translation %.0f, endpoint update %.0f", full, incremental)
}

// BenchmarkEndpointChange compares the two ways of following the change of
// one EndpointSlice of a gateway of 50 routes: a new translation, and an
// incremental one.
func BenchmarkEndpointChange(b *testing.B) {
	for _, how := range []string{"translate", "incremental"} {
		b.Run(how, func(b *testing.B) {
			idx, gw, slice := endpointChange(b, 50)
			x := newTranslator(idx, gatewayclass.DefaultControllerName)
			x.translate(gw)
			round := 0
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			for b.Loop() {
				round++
				applySlice(b, idx, slice, round%2)
				if how == "translate" {
					Translate(idx, gatewayclass.DefaultControllerName, gw)
				} else if out := x.translate(gw); out == nil || out.Build == nil {
					b.Fatal("no translation")
				}
			}
			reportCPU(b, cpu)
		})
	}
}
