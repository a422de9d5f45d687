package translator

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// The IRs are encoded off the follow loop while edits keep being
// translated (the race detector watches the two): edits come at random
// intervals around the IR's delay, and in the end the IR on the bus is a
// translation's of the last resources, written from their revision.
func TestServiceIRsFollowEdits(t *testing.T) {
	const routes = 300
	b := bustest.New(t)
	input := gatewaytest.ManyRoutes(routes)
	putYAMLString(t, b, input)
	startService(t, b)
	gw := types.NamespacedName{Namespace: "bench", Name: "eg"}
	key := bus.GatewayKey(gw.Namespace, gw.Name)
	waitFor(t, b, bus.IR, key, func(e *bus.Entry) bool { return e != nil })

	rng := rand.New(rand.NewPCG(1, 2))
	edited := map[int]string{}
	for k := range 20 {
		i := rng.IntN(routes)
		edited[i] = strings.Replace(gatewaytest.TenantRoute("bench", "eg", i),
			fmt.Sprintf("value: route-%d}", i), fmt.Sprintf("value: edit-%d}", k), 1)
		putYAMLString(t, b, edited[i])
		time.Sleep(time.Duration(rng.IntN(int(2 * irDelay))))
	}

	idx := resources.NewIndex()
	for _, y := range append([]string{input}, slices.Collect(maps.Values(edited))...) {
		rs, err := manifest.ReadResources(strings.NewReader(y), "test")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if _, err := idx.Apply(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := Translate(idx, gatewayclass.DefaultControllerName, gw).IR
	xds := waitFor(t, b, bus.XDS, key, func(e *bus.Entry) bool { return e != nil })
	ir := waitFor(t, b, bus.IR, key, func(e *bus.Entry) bool {
		return e != nil && proto.Equal(e.Value.(*irv1.Gateway), want)
	})
	if ir.SourceRevision != xds.SourceRevision {
		t.Errorf("the IR was written from revision %d, the xDS from %d: want the same", ir.SourceRevision, xds.SourceRevision)
	}
}
