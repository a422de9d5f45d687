package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNATSRestart kills nats-server (SIGKILL) under the running services
// and starts it again on the same port and storage folder. While it is
// away the xds replicas keep serving, also to an Envoy that connects only
// then, and the folder keeps changing; once it is back every service
// reconnects and resyncs, and every gateway ends with the offline
// translation of the folder.
func TestNATSRestart(t *testing.T) {
	const gateways = 4
	dir := filepath.Join(t.TempDir(), "resources")
	w := newWorld(dir, uint64(time.Now().UnixNano()), gateways, 3)
	w.create(t)
	c := startChaosCluster(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	var envoys []*roamingEnvoy
	t.Cleanup(func() {
		cancel()
		for _, e := range envoys {
			<-e.done
		}
	})
	for g := range gateways {
		envoys = append(envoys, roam(ctx, fmt.Sprintf("%s/gw-%d", chaosNamespace, g), c.xdsAddrs, g))
	}
	before := w.expected(t)
	converge(t, envoys, before, 2*time.Minute)

	_ = c.nats.cmd.Process.Signal(syscall.SIGKILL)
	<-c.nats.done
	killed := time.Now()
	late := roam(ctx, fmt.Sprintf("%s/gw-0", chaosNamespace), c.xdsAddrs, 1)
	envoys = append(envoys, late)
	took := converge(t, []*roamingEnvoy{late}, before, time.Minute)
	t.Logf("with NATS away, a new Envoy got its configuration in %s", took.Sub(killed).Round(time.Millisecond))
	for g := range gateways {
		w.touch(t, g)
	}
	time.Sleep(4 * time.Second) // longer than the translators' member TTL; the changes wait for NATS

	c.nats = start(t, "nats-server", nil, c.natsArgs...)
	back := time.Now()
	waitListening(t, c.nats, strings.TrimPrefix(c.natsURL, "nats://"), 20*time.Second)
	took = converge(t, envoys, w.expected(t), 2*time.Minute)
	t.Logf("NATS back: the changes made while it was away served %s later", took.Sub(back).Round(time.Millisecond))
	for role, p := range c.procs {
		select {
		case <-p.done:
			t.Errorf("%s exited while NATS was away:\n%s", role, p.output())
		default:
		}
	}
}
