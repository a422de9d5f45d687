package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// fileWorld is a nats-server and a provider process over a folder, and a
// bus connection that counts every deletion of the resources bucket.
type fileWorld struct {
	dir, natsAddr, admin string
	provider             *proc
	bus                  *bus.Bus
	deletes              atomic.Int64
}

func newFileWorld(t *testing.T) *fileWorld {
	t.Helper()
	tmp := t.TempDir()
	w := &fileWorld{dir: filepath.Join(tmp, "resources"), natsAddr: freeAddr(t)}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(w.natsAddr, ":")
	nats := start(t, "nats-server", nil, "-a", host, "-p", port, "-js", "-sd", filepath.Join(tmp, "nats"))
	waitListening(t, nats, w.natsAddr, 20*time.Second)
	return w
}

// startProvider starts the provider and waits until it is ready.
func (w *fileWorld) startProvider(t *testing.T) {
	t.Helper()
	w.admin = freeAddr(t)
	w.provider = start(t, "provider", []string{"GATEWIRE_ADMIN_ADDRESS=" + w.admin, "GATEWIRE_NATS_URL=nats://" + w.natsAddr,
		"GATEWIRE_SYSTEM=it", "GATEWIRE_PROVIDER_DIR=" + w.dir})
	waitReady(t, w.provider, w.admin, 60*time.Second)
	if w.bus == nil {
		w.follow(t)
	}
}

// follow connects to the bus and counts the deletions of resources keys.
func (w *fileWorld) follow(t *testing.T) {
	t.Helper()
	nc, err := nats.Connect("nats://" + w.natsAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if w.bus, err = bus.New(ctx, nc, bus.WithSystem("it"), bus.WithOpenOnly()); err != nil {
		t.Fatal(err)
	}
	watch, err := w.bus.Watch(ctx, bus.Resources, ">", bus.HeadersOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(watch.Stop)
	go func() {
		for e := range watch.Updates() {
			if e != nil && e.Op == bus.OpDelete {
				w.deletes.Add(1)
				t.Logf("deleted: %s", e.Key)
			}
		}
	}()
}

// keys returns the keys of HTTPRoutes whose value decodes.
func (w *fileWorld) routes(t *testing.T) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := w.bus.Keys(ctx, bus.Resources, "HTTPRoute.>")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, k := range keys {
		out[k] = true
	}
	return out
}

func rewrite(t *testing.T, path, content string) {
	t.Helper()
	// os.WriteFile opens with O_TRUNC, then writes: what `cat > f` does.
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInPlaceRewritesNeverDelete rewrites a route file in place 300 times:
// the provider never publishes a deletion, and the route stays on the bus.
func TestInPlaceRewritesNeverDelete(t *testing.T) {
	w := newFileWorld(t)
	rewrite(t, filepath.Join(w.dir, "gateway.yaml"), gatewaytest.GatewayClass()+gatewaytest.Gateway("default", "eg"))
	route := filepath.Join(w.dir, "httproute.yaml")
	content := gatewaytest.TenantRoute("default", "eg", 1) + gatewaytest.TenantRoute("default", "eg", 2)
	rewrite(t, route, content)
	w.startProvider(t)
	for i := range 300 {
		rewrite(t, route, content)
		time.Sleep(time.Duration(i%7) * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // past the provider's settling of a file
	if n := w.deletes.Load(); n != 0 {
		t.Errorf("%d deletions published while the file was rewritten with the same content", n)
	}
	if got := w.routes(t); len(got) != 2 {
		t.Errorf("routes on the bus: %v, want 2", got)
	}
}

// TestProviderKilledDuringBulkRewrite rewrites 1,000 route files in place,
// kills the provider 0.2 s later and starts it again: no route is ever
// deleted, and all 1,000 are on the bus.
func TestProviderKilledDuringBulkRewrite(t *testing.T) {
	const n = 1000
	w := newFileWorld(t)
	rewrite(t, filepath.Join(w.dir, "gateway.yaml"), gatewaytest.GatewayClass()+gatewaytest.Gateway("default", "eg"))
	for i := range n {
		rewrite(t, filepath.Join(w.dir, fmt.Sprintf("r-%04d.yaml", i)), gatewaytest.TenantRoute("default", "eg", i))
	}
	w.startProvider(t)
	if got := w.routes(t); len(got) != n {
		t.Fatalf("%d routes on the bus after the first start, want %d", len(got), n)
	}
	for i := range n {
		rewrite(t, filepath.Join(w.dir, fmt.Sprintf("r-%04d.yaml", i)), gatewaytest.TenantRoute("default", "eg", i))
	}
	time.Sleep(200 * time.Millisecond)
	_ = syscall.Kill(w.provider.cmd.Process.Pid, syscall.SIGKILL)
	<-w.provider.done
	w.startProvider(t)
	time.Sleep(2 * time.Second) // past the provider's settling of a file
	if got := w.routes(t); len(got) != n {
		t.Errorf("%d routes on the bus after the restart, want %d", len(got), n)
	}
	if d := w.deletes.Load(); d != 0 {
		t.Errorf("%d deletions published, want none", d)
	}
}

// TestGarbageResourceIsRepaired writes a value that does not decode to a
// route's key: the running provider writes its own again within seconds.
func TestGarbageResourceIsRepaired(t *testing.T) {
	w := newFileWorld(t)
	rewrite(t, filepath.Join(w.dir, "all.yaml"), gatewaytest.GatewayClass()+gatewaytest.Gateway("default", "eg")+
		gatewaytest.TenantRoute("default", "eg", 7))
	w.startProvider(t)
	key := bus.ResourceKey("HTTPRoute", "default", "route-7")
	nc := w.bus.Conn()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(w.bus.BucketName(bus.Resources))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(key, []byte("\xff\xfe not a resource")); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		e, err := w.bus.Get(ctx, bus.Resources, key)
		cancel()
		if err == nil && e.Err == nil {
			if res, ok := e.Value.(*busv1.Resource); ok && res.GetName() == "route-7" {
				t.Logf("repaired in %s", time.Since(written).Round(time.Millisecond))
				break
			}
		}
		if time.Since(written) > 5*time.Second {
			t.Fatalf("the garbage value of %s is still there after 5s: %v", key, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := kv.Delete(key); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := w.bus.Get(ctx, bus.Resources, key)
		cancel()
		if err == nil {
			t.Logf("deletion repaired in %s", time.Since(deleted).Round(time.Millisecond))
			return
		}
		if time.Since(deleted) > 5*time.Second {
			t.Fatalf("%s is still deleted after 5s: %v", key, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
