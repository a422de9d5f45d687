package file_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
)

// TestPublishedTimeStamped checks that each value the provider writes
// carries when it was published, which the translator passes on to the
// xds service to measure propagation.
func TestPublishedTimeStamped(t *testing.T) {
	e := newEnv(t)
	e.write("gw.yaml", gatewayDoc)
	before := time.Now()
	e.start()
	entry, err := e.bus.Get(context.Background(), bus.Resources, gatewayKey)
	if err != nil {
		t.Fatal(err)
	}
	published, ok := entry.Published()
	if !ok {
		t.Fatalf("value has no %s header: %v", bus.HeaderPublished, entry.Header)
	}
	if published.Before(before) || published.After(time.Now()) {
		t.Fatalf("published at %s, not between the start (%s) and now", published, before)
	}
}
