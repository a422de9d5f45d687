package translator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/translator/shard"
)

// waitMembers waits until every replica is ready and sees n members.
func waitMembers(t *testing.T, n int, rs ...*replica) {
	t.Helper()
	for _, r := range rs {
		testkit.EventuallyValue(t, 20*time.Second, fmt.Sprintf("replica %s to be ready with %d members", r.ID(), n), func() (string, bool) {
			v, ok := r.members.View()
			return fmt.Sprintf("ready %v, members %v", r.Ready(), v.Members()), ok && r.Ready() && len(v.Members()) == n
		})
	}
}

// changeRoutes gives route 0 of each of n gateways the prefix and returns
// the revision of each change by gateway.
func changeRoutes(t *testing.T, b *bus.Bus, n int, prefix string) map[types.NamespacedName]uint64 {
	t.Helper()
	revs := map[types.NamespacedName]uint64{}
	for g := range n {
		r := fleetRouteResource(t, g, 0, prefix)
		rev, err := b.Put(context.Background(), bus.Resources, bus.ResourceKey(r.Kind, r.Namespace, r.Name), r)
		if err != nil {
			t.Fatal(err)
		}
		revs[fleetGatewayName(g)] = rev
	}
	return revs
}

// waitOutputs waits until the xds snapshot of each gateway is computed from
// at least its revision, and returns the writer of each.
func waitOutputs(t *testing.T, b *bus.Bus, revs map[types.NamespacedName]uint64) map[types.NamespacedName]string {
	t.Helper()
	writers := map[types.NamespacedName]string{}
	for gw, rev := range revs {
		e := waitFor(t, b, bus.XDS, bus.GatewayKey(gw.Namespace, gw.Name), func(e *bus.Entry) bool {
			return e != nil && e.SourceRevision >= rev
		})
		writers[gw] = e.Header.Get(headerWriter)
		// The IR follows the other outputs (see irDelay).
		waitFor(t, b, bus.IR, bus.GatewayKey(gw.Namespace, gw.Name), func(e *bus.Entry) bool {
			return e != nil && e.SourceRevision >= rev
		})
	}
	return writers
}

func ownedBy(v shard.View, member string, n int) map[types.NamespacedName]bool {
	out := map[types.NamespacedName]bool{}
	for g := range n {
		if gw := fleetGatewayName(g); v.Owner(gatewayShardKey(gw)) == member {
			out[gw] = true
		}
	}
	return out
}

func sortedNames[V any](m map[types.NamespacedName]V) []string {
	var out []string
	for gw := range m {
		out = append(out, gw.String())
	}
	slices.Sort(out)
	return out
}

// Two replicas share the gateways: each is translated by its owner alone;
// a crashed replica's gateways are taken over; a replica that joins
// translates only the gateways it wins, and when it leaves only those move
// back.
func TestReplicasShareGateways(t *testing.T) {
	const n = 12
	c := newCluster(t)
	putAll(t, c.shared, fleet(t, n, 1)...)
	a, b := c.start(t, fastConfig("a")), c.start(t, fastConfig("b"))
	waitMembers(t, 2, a, b)
	view := shard.NewView("a", "b")

	since := time.Now()
	writers := waitOutputs(t, c.shared, changeRoutes(t, c.shared, n, "/v1"))
	for gw, w := range writers {
		if owner := view.Owner(gatewayShardKey(gw)); w != owner {
			t.Errorf("%s written by %q, want its owner %q", gw, w, owner)
		}
	}
	for _, r := range []*replica{a, b} {
		for gw := range r.translated(since) {
			if owner := view.Owner(gatewayShardKey(gw)); owner != r.ID() {
				t.Errorf("%s translated %s, owned by %s", r.ID(), gw, owner)
			}
		}
	}
	checkClassWriter(t, c.shared, view)

	crashed := time.Now()
	b.crash()
	for gw, w := range waitOutputs(t, c.shared, changeRoutes(t, c.shared, n, "/v2")) {
		if w != "a" {
			t.Errorf("after b crashed, %s written by %q, want a", gw, w)
		}
	}
	t.Logf("b's gateways taken over and changed %s after its crash", time.Since(crashed).Round(time.Millisecond))

	joined := time.Now()
	cr := c.start(t, fastConfig("c"))
	waitMembers(t, 2, a, cr)
	wins := ownedBy(shard.NewView("a", "c"), "c", n)
	waitTranslated(t, cr, joined, wins)
	if got := a.translated(joined); len(got) != 0 {
		t.Errorf("a translated %v when c joined, want nothing", sortedNames(got))
	}

	left := time.Now()
	cr.stop()
	waitMembers(t, 1, a)
	waitTranslated(t, a, left, wins)
}

// waitTranslated waits until r has translated exactly want since since.
func waitTranslated(t *testing.T, r *replica, since time.Time, want map[types.NamespacedName]bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.translated(since)
		if len(got) >= len(want) || time.Now().After(deadline) {
			if fmt.Sprint(sortedNames(got)) != fmt.Sprint(sortedNames(want)) {
				t.Fatalf("%s translated %v, want %v", r.ID(), sortedNames(got), sortedNames(want))
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkClassWriter changes the GatewayClass and checks that its status is
// written by the owner of its name.
func checkClassWriter(t *testing.T, b *bus.Bus, view shard.View) {
	t.Helper()
	class := fleet(t, 0, 0)[0]
	class.Generation = 7
	class.Object = []byte(`{"metadata":{"name":"gatewire","generation":7},"spec":{"controllerName":"gatewire.dev/gatewayclass-controller"}}`)
	putAll(t, b, class)
	e := waitFor(t, b, bus.Status, ClassStatusKey("gatewire"), func(e *bus.Entry) bool {
		return e != nil && e.Value.(*busv1.Status).GetObservedGeneration() == 7
	})
	if w, owner := e.Header.Get(headerWriter), view.Owner(classShardKey("gatewire")); w != owner {
		t.Errorf("class status written by %q, want its owner %q", w, owner)
	}
}

// An output computed from newer resources (by a replica that has read
// further) is never overwritten by one computed from older resources.
func TestOlderSourceRevisionIsRefused(t *testing.T) {
	c := newCluster(t)
	putAll(t, c.shared, fleet(t, 1, 1)...)
	r := c.start(t, fastConfig("slow"))
	waitMembers(t, 1, r)
	gw := fleetGatewayName(0)
	key := bus.GatewayKey(gw.Namespace, gw.Name)
	first := waitFor(t, c.shared, bus.XDS, key, func(e *bus.Entry) bool { return e != nil })

	// Another replica, far ahead, wrote its result.
	ahead := first.SourceRevision + 1000
	newer := &busv1.XdsSnapshot{NodeCluster: "fleet/gw-0", Version: "from-the-future", SourceRevision: ahead}
	if _, err := c.shared.Put(context.Background(), bus.XDS, key, newer, bus.WithSourceRevision(ahead), bus.WithHeader(headerWriter, "fast")); err != nil {
		t.Fatal(err)
	}
	// This replica translates a change from an older revision: refused.
	rev := changeRoutes(t, c.shared, 1, "/older")[gw]
	waitFor(t, c.shared, bus.IR, key, func(e *bus.Entry) bool { return e != nil && e.SourceRevision >= rev })
	got, err := c.shared.Get(context.Background(), bus.XDS, key)
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Value.(*busv1.XdsSnapshot).GetVersion(); v != "from-the-future" || got.SourceRevision != ahead {
		t.Errorf("xds snapshot is %s from revision %d, want the newer one from %d", v, got.SourceRevision, ahead)
	}
	// The bus refuses such a write whoever makes it.
	_, err = c.shared.Put(context.Background(), bus.XDS, key, first.Value, bus.WithSourceRevision(first.SourceRevision))
	if !errors.Is(err, bus.ErrStale) {
		t.Errorf("write from revision %d over %d: %v, want ErrStale", first.SourceRevision, ahead, err)
	}
}

// A Service change translates only the gateways whose routes send traffic
// to it; an EndpointSlice change only updates the endpoints of its
// gateway's last translation.
func TestChangesTouchOnlyDependentGateways(t *testing.T) {
	const n = 4
	c := newCluster(t)
	rs := fleet(t, n, 2)
	putAll(t, c.shared, rs...)
	r := c.start(t, fastConfig("only"))
	waitMembers(t, 1, r)
	waitOutputs(t, c.shared, map[types.NamespacedName]uint64{fleetGatewayName(n - 1): 1})

	since := time.Now()
	for _, res := range rs {
		if res.Kind == "Service" && res.Name == "shared" {
			res.Object = []byte(`{"spec":{"ports":[{"name":"http","port":80,"targetPort":9090}]}}`)
			putAll(t, c.shared, res)
		}
	}
	want := map[types.NamespacedName]bool{fleetGatewayName(0): true, fleetGatewayName(1): true}
	waitTranslated(t, r, since, want)

	since = time.Now()
	putAll(t, c.shared, fleetSliceResource(t, 2, 1, 9))
	waitTranslated(t, r, since, map[types.NamespacedName]bool{fleetGatewayName(2): true})
	if how := r.translated(since)[fleetGatewayName(2)]; how != "translate" {
		t.Errorf("an EndpointSlice change made a %q translation, want translate", how)
	}
	got := slices.Collect(maps.Keys(r.translated(since)))
	if len(got) != 1 {
		t.Errorf("an EndpointSlice change translated %v", got)
	}
}
