package translator

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// The translator rides out a restart of NATS (file storage, same port and
// folder): every output is still there afterwards, and changes made after
// the restart are translated.
func TestTranslatorRidesOutNATSRestart(t *testing.T) {
	srv := bustest.StartRestartable(t)
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	b := bustest.Open(t, nc)
	const n = 3
	putAll(t, b, fleet(t, n, 2)...)
	r := startOn(t, b, fastConfig("survivor"))
	waitMembers(t, 1, r)
	revs := changeRoutes(t, b, n, "/before")
	waitOutputs(t, b, revs)
	before := outputKeys(t, b)

	srv.Stop()
	time.Sleep(2 * fastConfig("").MemberTTL) // longer than every timeout of the membership
	srv.Start()

	if after := outputKeys(t, b); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("outputs after the restart:\n%v\nbefore:\n%v", after, before)
	}
	probe := fleetRouteResource(t, 0, 1, "/probe")
	// Writes fail until the client has reconnected.
	testkit.EventuallyValue(t, 20*time.Second, "a write after the restart", func() (error, bool) {
		_, err := b.Put(context.Background(), bus.Resources, bus.ResourceKey(probe.Kind, probe.Namespace, probe.Name), probe)
		return err, err == nil
	})
	waitOutputs(t, b, changeRoutes(t, b, n, "/after"))
	waitMembers(t, 1, r)
}

// startOn runs a replica over an existing bus.
func startOn(t *testing.T, b *bus.Bus, cfg Config) *replica {
	t.Helper()
	s, err := New(cfg, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &replica{Service: s, stop: runService(t, s)}
}

// outputKeys lists the keys of every output bucket.
func outputKeys(t *testing.T, b *bus.Bus) []string {
	t.Helper()
	var out []string
	for _, bucket := range outputBuckets {
		keys, err := b.Keys(context.Background(), bucket, ">")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			out = append(out, string(bucket)+"/"+k)
		}
	}
	slices.Sort(out)
	return out
}
