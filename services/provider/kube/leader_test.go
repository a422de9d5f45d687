package kube_test

import (
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
)

// takeover starts two providers on one Lease, checks that only the first
// writes status, stops it, and returns how long the second took to lead;
// the second then writes status.
func takeover(t *testing.T, keepLease bool) time.Duration {
	h := newHarness(t)
	ns := h.ns
	ours := h.class(controllerName)
	h.create(ours, gateway(ns, "gw", ours.Name))
	opts := h.options()
	opts.KeepLeaseOnStop = keepLease
	first := h.start(opts)
	h.eventually("the first provider leads", first.Leading)
	second := h.start(opts)
	key := bus.StatusKey("Gateway", ns, "gw", ns, "gw")
	h.putStatus(key, gatewayEntry(ns, "gw", "True"))
	h.eventually("the first provider writes the status", func() bool { return first.StatusWrites() > 0 })
	if second.Leading() || second.StatusWrites() != 0 {
		t.Fatalf("the second provider leads (%v) or wrote status (%d writes) while the first leads",
			second.Leading(), second.StatusWrites())
	}
	stopped := time.Now()
	first.stop()
	h.eventually("the second provider leads", second.Leading)
	took := time.Since(stopped)
	h.putStatus(key, gatewayEntry(ns, "gw", "False"))
	h.eventually("the second provider writes the status", func() bool { return second.StatusWrites() > 0 })
	return took
}

func TestLeaderThatStopsIsReplacedAtOnce(t *testing.T) {
	took := takeover(t, false)
	t.Logf("the Lease was released: the second provider led %s after the first stopped", took.Round(time.Millisecond))
	if limit := time.Second + 5*200*time.Millisecond; took > limit {
		t.Errorf("takeover took %s, want under %s (a released Lease is taken within a retry period)", took, limit)
	}
}

func TestLeaderThatDiesIsReplacedWhenItsLeaseExpires(t *testing.T) {
	took := takeover(t, true)
	t.Logf("the Lease was kept: the second provider led %s after the first stopped", took.Round(time.Millisecond))
	if took < 2*time.Second {
		t.Errorf("takeover took %s, before the Lease of %s could expire", took, 3*time.Second)
	}
}
