package translator

import (
	"context"
	"testing"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
)

// The status entries of the other services (the infra service's addresses,
// the xds service's data-plane reports) are not the translator's: removing
// orphans, at start or when a Gateway goes, leaves them alone.
func TestServiceLeavesOtherServicesStatuses(t *testing.T) {
	b := bustest.New(t)
	putYAML(t, b, serviceCase)
	ctx := context.Background()
	others := []string{
		bus.StatusKey("Gateway", "default", "eg", bus.Infrastructure, bus.Infrastructure),
		bus.DataPlaneStatusKey("default", "eg", "xds-0"),
	}
	for _, k := range others {
		if _, err := b.Put(ctx, bus.Status, k, &busv1.Status{Addresses: []string{"10.0.0.1"}}); err != nil {
			t.Fatal(err)
		}
	}
	orphan := bus.StatusKey("HTTPRoute", "gone", "r", "gone", "gw")
	if _, err := b.Put(ctx, bus.Status, orphan, &busv1.Status{}, bus.WithSourceRevision(1)); err != nil {
		t.Fatal(err)
	}

	s, _ := startService(t, b)
	waitReady(t, s)
	waitFor(t, b, bus.Status, orphan, func(e *bus.Entry) bool { return e == nil })
	if err := b.Delete(ctx, bus.Resources, bus.ResourceKey("Gateway", "default", "eg")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, b, bus.Status, gatewayStatus, func(e *bus.Entry) bool { return e == nil })
	for _, k := range others {
		if _, err := b.Get(ctx, bus.Status, k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}
