package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// robustCluster is a nats-server, provider, translator and xds service as
// processes, serving shop/edge with the cart route, and an Envoy of it.
type robustCluster struct {
	dir, natsURL string
	env          []string
	procs        map[string]*proc
	admins       map[string]string
	envoy        *envoy
	bus          *bus.Bus
}

// startRobust starts the cluster; natsConf, when set, is the content of
// the nats-server's configuration file (its store_dir is added).
func startRobust(t *testing.T, natsConf string, env ...string) *robustCluster {
	t.Helper()
	tmp := t.TempDir()
	c := &robustCluster{dir: filepath.Join(tmp, "resources"), procs: map[string]*proc{}, admins: map[string]string{}}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	natsAddr := freeAddr(t)
	host, port, _ := strings.Cut(natsAddr, ":")
	args := []string{"-a", host, "-p", port, "-js", "-sd", filepath.Join(tmp, "nats")}
	if natsConf != "" {
		conf := filepath.Join(tmp, "nats.conf")
		write(t, conf, natsConf)
		args = append(args, "-c", conf)
	}
	server := start(t, "nats-server", nil, args...)
	waitListening(t, server, natsAddr, 20*time.Second)
	c.natsURL = "nats://" + natsAddr
	xdsAddr := freeAddr(t)
	c.env = append([]string{"GATEWIRE_NATS_URL=" + c.natsURL, "GATEWIRE_SYSTEM=robust"}, env...)
	write(t, filepath.Join(c.dir, "gateway.yaml"), gatewayYAML)
	write(t, filepath.Join(c.dir, "backend.yaml"), backendYAML)
	write(t, filepath.Join(c.dir, "route.yaml"), routeYAML("/cart"))
	for _, name := range []string{"provider", "translator", "xds"} {
		extra := map[string][]string{"provider": {"GATEWIRE_PROVIDER_DIR=" + c.dir}, "xds": {"GATEWIRE_XDS_ADDRESS=" + xdsAddr, "GATEWIRE_XDS_INSECURE=true"}}[name]
		c.start(t, name, extra...)
	}
	c.envoy = connectEnvoyWith(t, xdsAddr, "shop/edge", insecure.NewCredentials())
	c.envoy.waitFor(t, 30*time.Second, "the cart route", hasCart)
	nc, err := nats.Connect(c.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c.bus, err = bus.New(ctx, nc, bus.WithSystem("robust"), bus.WithOpenOnly()); err != nil {
		t.Fatal(err)
	}
	return c
}

func hasCart(s snapshot) bool { return routeTo(s, "shop.example.com", "/cart") != "" }

// start starts service name and waits until it is ready.
func (c *robustCluster) start(t *testing.T, name string, env ...string) {
	t.Helper()
	admin := freeAddr(t)
	c.admins[name] = admin
	c.procs[name] = start(t, name, append(append([]string{"GATEWIRE_ADMIN_ADDRESS=" + admin}, c.env...), env...))
	waitReady(t, c.procs[name], admin, 60*time.Second)
}

// rawPut writes data under key of the resources bucket with h, as a
// foreign writer would, and returns the server's error.
func (c *robustCluster) rawPut(t *testing.T, key string, h nats.Header, data []byte) error {
	t.Helper()
	js, err := jetstream.New(c.bus.Conn())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = js.PublishMsg(ctx, &nats.Msg{Subject: "$KV.robust-resources." + key, Header: h, Data: data})
	return err
}

// rss is the resident memory of a process, in bytes.
func rss(t *testing.T, p *proc) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("%s: no VmHWM", p.name)
	return 0
}

// TestChaosDecompressionBomb writes a value marked zstd that expands to
// 1 GiB into the resources bucket: the translator's peak memory stays
// within a bound, it keeps running, and an edit still reaches the Envoy.
func TestChaosDecompressionBomb(t *testing.T) {
	c := startRobust(t, "")
	tr := c.procs["translator"]
	before := rss(t, tr)
	var packed bytes.Buffer
	enc, _ := zstd.NewWriter(&packed, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	zeros := make([]byte, 1<<20)
	for range 1024 {
		_, _ = enc.Write(zeros)
	}
	_ = enc.Close()
	h := nats.Header{}
	h.Set(bus.HeaderType, "gatewire.bus.v1.Resource")
	h.Set(bus.HeaderEncoding, "zstd")
	if err := c.rawPut(t, bus.ResourceKey("HTTPRoute", "shop", "bomb"), h, packed.Bytes()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(tr.output(), "HTTPRoute.shop.bomb") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(tr.output(), "HTTPRoute.shop.bomb") {
		t.Fatal("the translator did not report the bomb's key within 20s")
	}
	after := rss(t, tr)
	t.Logf("a %d-byte bomb of 1 GiB: translator peak RSS %d MiB before, %d MiB after", packed.Len(), before>>20, after>>20)
	if bound := int64(256 << 20); after-before > bound {
		t.Fatalf("the translator's peak memory grew by %d MiB, want at most %d MiB", (after-before)>>20, bound>>20)
	}
	select {
	case <-tr.done:
		t.Fatal("the translator died of the bomb")
	default:
	}
	// The bomb's key is unknown to the translator, which has translated
	// already: it holds nothing (see the translator's syncGate), and the
	// edit goes through at once.
	write(t, filepath.Join(c.dir, "route.yaml"), routeYAML("/basket"))
	c.envoy.waitFor(t, 20*time.Second, "the edited route after the bomb", func(s snapshot) bool {
		return routeTo(s, "shop.example.com", "/basket") != ""
	})
}

// TestChaosCorruptValueAfterRestart kills the provider and the translator
// with SIGKILL, writes garbage under the cart route's key and starts the
// translator again: the
// route is not taken for deleted (the Envoy keeps it while translation
// waits, and its status stays), and the Gateway's status says which key
// does not decode.
func TestChaosCorruptValueAfterRestart(t *testing.T) {
	c := startRobust(t, "")
	// The provider is down too: it repairs a corrupt key within a second
	// (its own test), and this one is of the translator alone.
	for _, name := range []string{"provider", "translator"} {
		p := c.procs[name]
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
	h := nats.Header{}
	h.Set(bus.HeaderType, "gatewire.bus.v1.Resource")
	key := bus.ResourceKey("HTTPRoute", "shop", "cart")
	if err := c.rawPut(t, key, h, []byte{0xff, 0xff, 0x01}); err != nil {
		t.Fatal(err)
	}
	admin := freeAddr(t)
	c.procs["translator"] = start(t, "translator", append([]string{"GATEWIRE_ADMIN_ADDRESS=" + admin}, c.env...))
	gwKey := bus.StatusKey("Gateway", "shop", "edge", "shop", "edge")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if e, err := c.bus.Get(context.Background(), bus.Status, gwKey); err == nil {
			if cond := conditionOf(e.Value.(*busv1.Status), "gatewire.io/ResourcesDecoded"); cond != nil {
				if cond.GetStatus() != "False" || !strings.Contains(cond.GetMessage(), key) {
					t.Fatalf("condition %v, want False naming %s", cond, key)
				}
				t.Logf("the Gateway says: %s", cond.GetMessage())
				break
			}
		}
		if time.Since(deadline) > 0 {
			t.Fatal("the Gateway's status did not report the corrupt route within 60s")
		}
		if !hasCart(c.envoy.snapshot()) && time.Until(deadline) > 35*time.Second {
			t.Fatal("the Envoy lost the cart route while its value was merely unknown")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := c.bus.Get(context.Background(), bus.Status, bus.StatusKey("HTTPRoute", "shop", "cart", "shop", "edge")); err != nil {
		t.Fatalf("the status of the route whose value does not decode: %v, want it kept", err)
	}
}

func conditionOf(s *busv1.Status, typ string) *busv1.Condition {
	for _, c := range s.GetConditions() {
		if c.GetType() == typ {
			return c
		}
	}
	return nil
}

// TestChaosFullStore runs the services on a nats-server with a 64 MiB
// store, then fills the resources bucket with values of a foreign writer
// until the server refuses them: removing the route's file still removes
// the route from the Envoy (the deletion goes through), and the
// translator's and xds service's buckets go on.
func TestChaosFullStore(t *testing.T) {
	c := startRobust(t, "jetstream {\n  max_file_store: 64MB\n}\n", "GATEWIRE_BUS_MAX_BYTES=62914560")
	h := nats.Header{}
	h.Set(bus.HeaderType, "gatewire.bus.v1.Resource")
	// Values that decode, of a kind the translator does not translate, so
	// that only the room they take matters.
	junk := make([]byte, 256<<10)
	n := 0
	var err error
	for ; n < 1000; n++ {
		_, _ = rand.Read(junk)
		value, _ := proto.Marshal(&busv1.Resource{Kind: "Fill", Namespace: "fill", Name: strconv.Itoa(n), Object: junk})
		if err = c.rawPut(t, bus.ResourceKey("Fill", "fill", strconv.Itoa(n)), h, value); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("1,000 values of 256 KiB went into a 64 MiB store")
	}
	// Then small ones, so that no room is left for a route.
	for small := 0; small < 5000; small, n = small+1, n+1 {
		value, _ := proto.Marshal(&busv1.Resource{Kind: "Fill", Namespace: "fill", Name: strconv.Itoa(n), Object: junk[:64]})
		if err = c.rawPut(t, bus.ResourceKey("Fill", "fill", strconv.Itoa(n)), h, value); err != nil {
			break
		}
	}
	t.Logf("the store refused the value after %d values of 256 KiB: %v", n, err)
	if err := os.Remove(filepath.Join(c.dir, "route.yaml")); err != nil {
		t.Fatal(err)
	}
	c.envoy.waitFor(t, 20*time.Second, "the route removed while the store is full", func(s snapshot) bool { return !hasCart(s) })
	write(t, filepath.Join(c.dir, "route.yaml"), routeYAML("/cart"))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(c.procs["provider"].output(), "bus write refused") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(c.procs["provider"].output(), "bus write refused") {
		t.Error("the provider did not log the write the full bucket refused")
	}
	// The recovery of the README: remove what filled the bucket.
	for i := range n {
		if err := c.bus.Delete(context.Background(), bus.Resources, bus.ResourceKey("Fill", "fill", strconv.Itoa(i))); err != nil {
			t.Fatalf("recovery: delete %d: %v", i, err)
		}
	}
}
