package translator

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// writeGarbage writes a value that does not decode under a resource key,
// as a careless or hostile writer would.
func writeGarbage(t *testing.T, b *bus.Bus, key string) {
	t.Helper()
	m := &nats.Msg{Subject: "$KV." + b.BucketName(bus.Resources) + "." + key, Header: nats.Header{}, Data: []byte{0xff, 0xff, 0x01}}
	m.Header.Set(bus.HeaderType, "gatewire.bus.v1.Resource")
	if err := b.Conn().PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	if err := b.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
}

// decodedCondition is the ResourcesDecoded condition of a status, or nil.
func decodedCondition(e *bus.Entry) *busv1.Condition {
	if e == nil {
		return nil
	}
	for _, c := range e.Value.(*busv1.Status).GetConditions() {
		if c.GetType() == ConditionResourcesDecoded {
			return c
		}
	}
	return nil
}

// waitStatus waits up to d for the status under key to satisfy ok.
func waitStatus(t *testing.T, b *bus.Bus, key string, d time.Duration, ok func(*bus.Entry) bool) *bus.Entry {
	t.Helper()
	return testkit.EventuallyValue(t, d, "status "+key+" as wanted", func() (*bus.Entry, bool) {
		e, _ := b.Get(context.Background(), bus.Status, key)
		return e, ok(e)
	})
}

// TestBadValueShowsInStatus: a route whose value goes bad under a running
// translator keeps its last value and its status, and the Gateway says
// ResourcesDecoded False naming the key until the value is written
// again. After a restart, with no last value, the translator holds the
// gateway, then translates it without the route, and the Gateway says so
// too: the route is not treated as deleted, its status stays.
func TestBadValueShowsInStatus(t *testing.T) {
	b := bustest.New(t)
	putYAMLString(t, b, gatewaytest.GatewayClass()+gatewaytest.Gateway("bench", "eg"))
	for i := range 2 {
		putYAMLString(t, b, gatewaytest.TenantRoute("bench", "eg", i)+gatewaytest.TenantBackends("bench", i))
	}
	first, stop := startService(t, b)
	waitReady(t, first)
	gwStatus := bus.StatusKey("Gateway", "bench", "eg", "bench", "eg")
	routeStatus := bus.StatusKey("HTTPRoute", "bench", "route-1", "bench", "eg")
	waitStatus(t, b, routeStatus, 10*time.Second, func(e *bus.Entry) bool { return e != nil })
	key := bus.ResourceKey("HTTPRoute", "bench", "route-1")
	good, err := b.Get(context.Background(), bus.Resources, key)
	if err != nil {
		t.Fatal(err)
	}

	writeGarbage(t, b, key)
	c := decodedCondition(waitStatus(t, b, gwStatus, 10*time.Second, func(e *bus.Entry) bool { return decodedCondition(e) != nil }))
	if c.GetStatus() != "False" || c.GetReason() != ReasonUndecodableValue {
		t.Fatalf("condition %v, want False %s", c, ReasonUndecodableValue)
	}
	if _, err := b.Put(context.Background(), bus.Resources, key, good.Value); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, b, gwStatus, 10*time.Second, func(e *bus.Entry) bool { return e != nil && decodedCondition(e) == nil })

	stop()
	writeGarbage(t, b, key)
	second, _ := startService(t, b)
	e := waitStatus(t, b, gwStatus, undecodableWait+15*time.Second, func(e *bus.Entry) bool { return decodedCondition(e) != nil })
	t.Logf("after the restart: %s", decodedCondition(e).GetMessage())
	waitReady(t, second)
	if e, _ := b.Get(context.Background(), bus.Status, routeStatus); e == nil {
		t.Fatal("the status of the route whose value does not decode was deleted, as if the route were")
	}
}
