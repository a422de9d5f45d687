package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// The size of the chaos test.
const (
	chaosGateways = 20
	chaosRoutes   = 5 // per gateway, each with its Service and EndpointSlice
	chaosChanges  = 1000
	// chaosPace is the time between two changes.
	chaosPace = 40 * time.Millisecond
	// chaosKillEvery is the mean time between two kills.
	chaosKillEvery = 3 * time.Second
	// chaosDowntime is the longest a killed process stays down.
	chaosDowntime = 1500 * time.Millisecond
)

// TestChaos runs nats-server, a provider, three translators and two xds
// replicas as processes, with an ADS client for each of 20 gateways,
// connected to either xds replica and moving to the other when its replica
// dies. It applies 1,000 changes to the provider's folder (routes,
// Services, EndpointSlices) while killing a random translator, xds or
// provider process with SIGKILL every few seconds and starting it again.
// At the end every gateway's xDS, as its client holds it, must equal the
// offline translation of the final folder: no change lost, no stale result
// left.
func TestChaos(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GATEWIRE_CHAOS_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (GATEWIRE_CHAOS_SEED replays it)", seed)
	dir := filepath.Join(t.TempDir(), "resources")
	w := newWorld(dir, seed, chaosGateways, chaosRoutes)
	w.create(t)
	c := startChaosCluster(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	envoys := make([]*roamingEnvoy, chaosGateways)
	for g := range envoys {
		envoys[g] = roam(ctx, fmt.Sprintf("%s/gw-%d", chaosNamespace, g), c.xdsAddrs, g)
	}
	t.Cleanup(func() {
		cancel()
		for _, e := range envoys {
			<-e.done
		}
	})
	started := time.Now()
	converge(t, envoys, w.expected(t), 2*time.Minute)
	t.Logf("initial configuration served in %s", time.Since(started).Round(time.Millisecond))

	rnd := rand.New(rand.NewPCG(seed, 1))
	kills := c.chaos(t, w, rnd)
	t.Logf("%d changes made, the last at %s; the last kill at %s", chaosChanges,
		c.lastChange.UTC().Format(time.StampMicro), c.lastKill.UTC().Format(time.StampMicro))
	took := converge(t, envoys, w.expected(t), 2*time.Minute)
	t.Logf("%d changes, %d kills (%s); converged %s after the last change, %s after the last kill",
		chaosChanges, len(kills), summarize(kills), took.Sub(c.lastChange).Round(time.Millisecond), took.Sub(c.lastKill).Round(time.Millisecond))

	// The last word: a translator and an xds replica die, then every
	// gateway changes. The dead translator's gateways wait for the others
	// to notice (GATEWIRE_TRANSLATOR_MEMBER_TTL).
	dead := []string{fmt.Sprintf("translator-%d", 1+rnd.IntN(3)), []string{"xds-a", "xds-b"}[rnd.IntN(2)]}
	for _, role := range dead {
		c.kill(role)
	}
	for g := range chaosGateways {
		w.touch(t, g)
		c.lastChange = time.Now()
	}
	took = converge(t, envoys, w.expected(t), 2*time.Minute)
	t.Logf("%s and %s killed, then %d changes: converged %s after the kill, %s after the last change",
		dead[0], dead[1], chaosGateways, took.Sub(c.lastKill).Round(time.Millisecond), took.Sub(c.lastChange).Round(time.Millisecond))
	for _, role := range dead {
		c.start(t, role)
	}
	converge(t, envoys, w.expected(t), 2*time.Minute)
	moves := 0
	for _, e := range envoys {
		m, nacks := e.stats()
		moves += m
		for _, err := range nacks {
			t.Errorf("NACK: %v", err)
		}
	}
	t.Logf("the clients moved between xds replicas %d times", moves)
}

// converge waits until every envoy holds what want says, and returns when
// they all did.
func converge(t *testing.T, envoys []*roamingEnvoy, want map[string]map[string]map[string]proto.Message, timeout time.Duration) time.Time {
	t.Helper()
	testkit.EventuallyValue(t, timeout, "every envoy to converge", func() (string, bool) {
		var diffs []string
		for _, e := range envoys {
			if d := e.diff(want[e.cluster]); d != "" {
				diffs = append(diffs, d)
			}
		}
		return fmt.Sprintf("%d gateways differ:\n%s", len(diffs), strings.Join(diffs, "\n")), len(diffs) == 0
	})
	return time.Now()
}

func summarize(kills []string) string {
	count := map[string]int{}
	for _, k := range kills {
		count[k]++
	}
	var parts []string
	for name, n := range count {
		parts = append(parts, fmt.Sprintf("%s×%d", name, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// chaosCluster is the processes of the chaos test, by role name.
type chaosCluster struct {
	nats     *proc
	natsArgs []string
	natsURL  string
	dir      string
	xdsAddrs []string
	procs    map[string]*proc
	env      map[string][]string
	// lastKill and lastChange are when the last process was killed and
	// the last change written.
	lastKill, lastChange time.Time
}

var chaosRoles = []string{"provider", "translator-1", "translator-2", "translator-3", "xds-a", "xds-b"}

func startChaosCluster(t *testing.T, dir string) *chaosCluster {
	t.Helper()
	natsAddr := freeAddr(t)
	host, port, _ := strings.Cut(natsAddr, ":")
	args := []string{"-a", host, "-p", port, "-js", "-sd", filepath.Join(filepath.Dir(dir), "nats")}
	nats := start(t, "nats-server", nil, args...)
	waitListening(t, nats, natsAddr, 20*time.Second)
	c := &chaosCluster{nats: nats, natsArgs: args, natsURL: "nats://" + natsAddr, dir: dir,
		xdsAddrs: []string{freeAddr(t), freeAddr(t)}, procs: map[string]*proc{}, env: map[string][]string{}}
	c.env["provider"] = []string{"GATEWIRE_PROVIDER_DIR=" + dir}
	// Plaintext (the explicit development opt-in): these tests break
	// processes and NATS, not trust; the mTLS path is TestServicesAsProcesses'.
	c.env["xds-a"] = []string{"GATEWIRE_XDS_ADDRESS=" + c.xdsAddrs[0], "GATEWIRE_XDS_REPLICA_ID=xds-a", "GATEWIRE_XDS_INSECURE=true"}
	c.env["xds-b"] = []string{"GATEWIRE_XDS_ADDRESS=" + c.xdsAddrs[1], "GATEWIRE_XDS_REPLICA_ID=xds-b", "GATEWIRE_XDS_INSECURE=true"}
	for _, role := range chaosRoles {
		admin := c.start(t, role)
		waitReady(t, c.procs[role], admin, 60*time.Second)
	}
	return c
}

// start starts the process of role and returns its admin address.
func (c *chaosCluster) start(t *testing.T, role string) string {
	t.Helper()
	admin := freeAddr(t)
	env := append([]string{"GATEWIRE_NATS_URL=" + c.natsURL, "GATEWIRE_SYSTEM=chaos", "GATEWIRE_ADMIN_ADDRESS=" + admin}, c.env[role]...)
	c.procs[role] = start(t, role, env)
	return admin
}

// kill ends the process of role with SIGKILL and waits until it is gone.
func (c *chaosCluster) kill(role string) {
	p := c.procs[role]
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	c.lastKill = time.Now()
}

// chaos applies the changes to w while killing a random process about
// every chaosKillEvery and starting it again within chaosDowntime. When it
// returns every process runs again. It returns the roles it killed.
func (c *chaosCluster) chaos(t *testing.T, w *world, rnd *rand.Rand) []string {
	t.Helper()
	var kills []string
	down := map[string]time.Time{} // role → when to start it again
	nextKill := time.Now().Add(jitter(rnd, chaosKillEvery))
	for range chaosChanges {
		now := time.Now()
		for role, at := range down {
			if now.After(at) {
				c.start(t, role)
				delete(down, role)
			}
		}
		if now.After(nextKill) {
			role := chaosRoles[rnd.IntN(len(chaosRoles))]
			if _, ok := down[role]; !ok {
				c.kill(role)
				kills = append(kills, strings.TrimRight(role, "-123ab"))
				down[role] = now.Add(time.Duration(rnd.Int64N(int64(chaosDowntime))))
			}
			nextKill = now.Add(jitter(rnd, chaosKillEvery))
		}
		w.change(t)
		c.lastChange = time.Now()
		time.Sleep(chaosPace)
	}
	for role := range down {
		c.start(t, role)
	}
	return kills
}

// jitter is a random duration between half and one and a half times d.
func jitter(rnd *rand.Rand, d time.Duration) time.Duration {
	return d/2 + time.Duration(rnd.Int64N(int64(d)))
}
