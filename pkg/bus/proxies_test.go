package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// TestProxiesBucket checks the key layout of the proxies bucket and that
// the bucket ages its entries out with the configured TTL.
func TestProxiesBucket(t *testing.T) {
	key := bus.ProxyKey("default", "eg.v2", "xds-0.local", "17")
	if key != "default.eg_v2.xds-0_local.17" {
		t.Fatalf("ProxyKey = %q", key)
	}
	ns, gw, replica, stream, err := bus.ParseProxyKey(key)
	if err != nil || ns != "default" || gw != "eg.v2" || replica != "xds-0.local" || stream != "17" {
		t.Fatalf("ParseProxyKey(%q) = %q %q %q %q %v", key, ns, gw, replica, stream, err)
	}
	if _, _, _, _, err := bus.ParseProxyKey("default.eg.xds-0"); err == nil {
		t.Error("ParseProxyKey accepted a key of three tokens")
	}
	if _, err := bus.New(context.Background(), bustest.Start(t), bus.WithProxiesTTL(bus.ProxiesRefresh)); err == nil {
		t.Error("New accepted a proxies TTL no longer than the refresh interval")
	}

	b := bustest.New(t, bus.WithProxiesTTL(11*time.Second))
	js, err := jetstream.New(b.Conn())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), b.BucketName(bus.Proxies))
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.TTL() != 11*time.Second {
		t.Errorf("proxies bucket TTL = %s, want 11s", st.TTL())
	}
	if _, err := b.Put(context.Background(), bus.Proxies, key, &busv1.ProxyStatus{NodeId: "default/eg/pod"}); err != nil {
		t.Fatal(err)
	}
}
