package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
)

// TestWithCreate: a user that may create only its own buckets creates
// those, and opens the others once someone else has made them.
func TestWithCreate(t *testing.T) {
	nc := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := bus.New(ctx, nc, bus.WithCreate(bus.Resources)); err == nil {
		t.Fatal("New opened buckets nobody created")
	}
	js, _ := nc.JetStream()
	if _, err := js.KeyValue("gatewire-resources"); err != nil {
		t.Fatalf("the bucket New creates was not created before it gave up: %v", err)
	}
	if _, err := js.KeyValue("gatewire-status"); err == nil {
		t.Fatal("New created a bucket it was not told to")
	}
	if _, err := bus.New(ctx, nc, bus.WithCreate(bus.Status, bus.IR, bus.XDS, bus.Infra, bus.Members, bus.Proxies, bus.Objects)); err != nil {
		t.Fatalf("the second owner: %v", err)
	}
	if _, err := bus.New(ctx, nc, bus.WithCreate(bus.Resources)); err != nil {
		t.Fatalf("the first owner, again: %v", err)
	}
	if _, err := bus.New(ctx, nc, bus.WithCreate("nonsense")); err == nil {
		t.Error("WithCreate accepted an unknown bucket")
	}
}
