package bus_test

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// TestPutWithMarshalled writes values given already marshalled, small and
// large enough to be compressed, and reads back what was given: the bytes
// are used as they are, not the message marshalled again.
func TestPutWithMarshalled(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	for _, size := range []int{10, 4 * bus.CompressThreshold} {
		msg := resource("web", bytes.Repeat([]byte("x"), size))
		data, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		// The bytes of another object, to see which are written.
		other := resource("other", bytes.Repeat([]byte("y"), size))
		key := bus.ResourceKey("Service", "default", "web")
		if _, err := b.Put(ctx, bus.Resources, key, other, bus.WithMarshalled(data)); err != nil {
			t.Fatal(err)
		}
		e, err := b.Get(ctx, bus.Resources, key)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Value.(*busv1.Resource); !proto.Equal(got, msg) {
			t.Fatalf("%d bytes: read back %q, want the marshalled value %q", size, got.GetName(), msg.GetName())
		}
	}
}
