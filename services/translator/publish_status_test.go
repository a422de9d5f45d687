package translator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// The statuses of a gateway of many routes are written a chunk at a time,
// and a translation that comes while they are written takes the place of
// the one being written. Routes are deleted and put back while the first
// translation's statuses are written; once they are, routes are added and
// deleted again. In the end, the bus holds exactly the statuses of a
// translation of what is left, none of those deleted.
func TestServiceStatusesOfManyRoutesFollowEdits(t *testing.T) {
	const routes = 3*statusChunk + 10
	b := bustest.New(t)
	putYAMLString(t, b, gatewaytest.ManyRoutes(routes))
	startService(t, b)
	gw := types.NamespacedName{Namespace: "bench", Name: "eg"}
	statusKeyOf := func(kind string, i int) string {
		return bus.StatusKey(kind, "bench", fmt.Sprintf("route-%d", i), gw.Namespace, gw.Name)
	}
	waitFor(t, b, bus.XDS, bus.GatewayKey(gw.Namespace, gw.Name), func(e *bus.Entry) bool { return e != nil })

	ctx := context.Background()
	routeKey := func(i int) string { return bus.ResourceKey("HTTPRoute", "bench", fmt.Sprintf("route-%d", i)) }
	for i := range 2 * statusChunk {
		if err := b.Delete(ctx, bus.Resources, routeKey(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range statusChunk / 2 {
		putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", i))
	}
	waitFor(t, b, bus.Status, statusKeyOf("HTTPRoute", 0), func(e *bus.Entry) bool { return e != nil })
	waitFor(t, b, bus.Status, statusKeyOf("HTTPRoute", routes-1), func(e *bus.Entry) bool { return e != nil })
	for i := range 2 * statusChunk {
		putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", 10_000+i))
	}
	for i := range 2 * statusChunk {
		if err := b.Delete(ctx, bus.Resources, routeKey(10_000+i)); err != nil {
			t.Fatal(err)
		}
	}

	// What a translation of the resources left gives.
	rs, err := manifest.ReadResources(strings.NewReader(gatewaytest.ManyRoutes(routes)), "test")
	if err != nil {
		t.Fatal(err)
	}
	idx := resources.NewIndex()
	for _, r := range rs {
		var i int
		if _, err := fmt.Sscanf(r.GetName(), "route-%d", &i); err == nil && r.GetKind() == "HTTPRoute" && i >= statusChunk/2 && i < 2*statusChunk {
			continue
		}
		if _, err := idx.Apply(r); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]*busv1.Status{}
	for _, st := range Translate(idx, gatewayclass.DefaultControllerName, gw).Statuses {
		want[statusKey(st, gw)] = st
	}
	if n := len(want); n != routes-2*statusChunk+statusChunk/2+1 {
		t.Fatalf("the expected translation has %d statuses; want one per route left and the gateway's", n)
	}

	got := func() map[string]*busv1.Status {
		keys, err := b.Keys(ctx, bus.Status, ">")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*busv1.Status{}
		for _, k := range keys {
			if g, ok := statusGateway(k); !ok || g != gw {
				continue
			}
			e, err := b.Get(ctx, bus.Status, k)
			if err != nil {
				continue // deleted since listed
			}
			out[k] = e.Value.(*busv1.Status)
		}
		return out
	}
	same := func(m map[string]*busv1.Status) bool {
		if len(m) != len(want) {
			return false
		}
		for k, v := range want {
			if !proto.Equal(m[k], v) {
				return false
			}
		}
		return true
	}
	var last map[string]*busv1.Status
	deadline := time.Now().Add(20 * time.Second)
	for last = got(); !same(last) && time.Now().Before(deadline); last = got() {
		time.Sleep(100 * time.Millisecond)
	}
	if !same(last) {
		var extra, missing []string
		for k := range last {
			if want[k] == nil {
				extra = append(extra, k)
			}
		}
		for k, v := range want {
			if !proto.Equal(last[k], v) {
				missing = append(missing, k)
			}
		}
		slices.Sort(extra)
		slices.Sort(missing)
		t.Fatalf("status keys of the gateway: %d, want %d; not given by the translation: %.5q; missing or different: %.5q",
			len(last), len(want), extra, missing)
	}
}

// A job replaced part-way may have written keys the one that replaces it
// does not give, or values it gives too: the last job deletes the former
// and keeps the latter, whatever the statuses written before it.
func TestStatusJobReplacedPartWay(t *testing.T) {
	b := bustest.New(t)
	s, err := New(DefaultConfig(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gw := types.NamespacedName{Namespace: "ns", Name: "eg"}
	st := newStatusSession()
	writeAll := func(out *Output) {
		st.queueStatuses(out, false)
		for len(st.statusJobs) > 0 {
			if err := s.writeStatusChunk(ctx, st); err != nil {
				t.Fatal(err)
			}
		}
	}

	first := routeStatuses(10)
	writeAll(&Output{Gateway: gw, Statuses: first})

	// Route 0 changes and many routes come: one chunk is written.
	edited := append([]*busv1.Status{statusOfRoute(0, 2)}, first[1:]...)
	more := slices.Clone(edited)
	for i := range statusChunk + 10 {
		more = append(more, statusOfRoute(100+i, 1))
	}
	st.queueStatuses(&Output{Gateway: gw, Statuses: more}, false)
	if err := s.writeStatusChunk(ctx, st); err != nil {
		t.Fatal(err)
	}
	if len(st.statusJobs) != 1 {
		t.Fatalf("after one chunk of %d statuses, %d jobs wait; want 1", len(more), len(st.statusJobs))
	}

	// The new routes go before the rest is written.
	writeAll(&Output{Gateway: gw, Statuses: edited})

	checkKeys := func(statuses []*busv1.Status) {
		t.Helper()
		keys, err := b.Keys(ctx, bus.Status, ">")
		if err != nil {
			t.Fatal(err)
		}
		want := make([]string, len(statuses))
		for i, status := range statuses {
			want[i] = statusKey(status, gw)
		}
		slices.Sort(keys)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			t.Fatalf("status keys: %d, want the %d of the last translation: got %q…", len(keys), len(want), keys[:min(len(keys), 3)])
		}
	}
	checkKeys(edited)
	// A route goes, with nothing else waiting: its status goes.
	writeAll(&Output{Gateway: gw, Statuses: edited[:9]})
	checkKeys(edited[:9])

	e, err := b.Get(ctx, bus.Status, statusKey(edited[0], gw))
	if err != nil {
		t.Fatal(err)
	}
	if g := e.Value.(*busv1.Status).GetObservedGeneration(); g != 2 {
		t.Errorf("route 0's status has observed generation %d; want 2, the edit's", g)
	}
}

// newStatusSession is a session with what writing statuses needs.
func newStatusSession() *session {
	return &session{ledger: newLedger(), revision: 1, sent: map[sentKey]sentValue{}, foreign: map[sentKey]bool{},
		statuses: map[types.NamespacedName]map[*busv1.Status]string{}, statusJobs: map[types.NamespacedName]*statusJob{}}
}

// statusOfRoute is the status of HTTPRoute ns/r<i> at generation.
func statusOfRoute(i int, generation int64) *busv1.Status {
	return &busv1.Status{Object: &busv1.ObjectRef{Kind: "HTTPRoute", Namespace: "ns", Name: fmt.Sprintf("r%d", i)}, ObservedGeneration: generation}
}

// routeStatuses are the statuses of routes r0 to r<n-1> at generation 1.
func routeStatuses(n int) []*busv1.Status {
	out := make([]*busv1.Status, n)
	for i := range out {
		out[i] = statusOfRoute(i, 1)
	}
	return out
}
