package xds

import (
	"context"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// proxyEntries reads the replica's entries of gateway ns/gw in the
// proxies bucket, by node id.
func proxyEntries(t *testing.T, h *harness) map[string]*busv1.ProxyStatus {
	t.Helper()
	ctx := context.Background()
	keys, err := h.bus.Keys(ctx, bus.Proxies, bus.GatewayKey("ns", "gw")+".>")
	if err != nil {
		return nil // no key yet
	}
	out := map[string]*busv1.ProxyStatus{}
	for _, key := range keys {
		e, err := h.bus.Get(ctx, bus.Proxies, key)
		if err != nil {
			continue
		}
		if st, ok := e.Value.(*busv1.ProxyStatus); ok {
			out[st.GetNodeId()] = st
		}
	}
	return out
}

func typeOf(st *busv1.ProxyStatus, url string) *busv1.ProxyTypeStatus {
	for _, t := range st.GetTypes() {
		if t.GetTypeUrl() == url {
			return t
		}
	}
	return nil
}

// TestProxiesBucket connects two mTLS clients of one gateway, one that
// ACKs and one that NACKs, and checks what the replica writes of each in
// the proxies bucket, the stale gauge, and that an entry goes when its
// stream ends.
func TestProxiesBucket(t *testing.T) {
	h, p := startTLS(t, bustest.New(t))
	h.put(t, "ns.gw", xdstest.Sample("ns/gw", "v1"))
	h.waitVersion(t, "ns/gw", "v1")
	conn := dial(t, h, clientCreds(t, certstest.Gateway(t, p.ca, "ns", "gw")))
	good := openADSAs(t, conn, node("ns/gw"), resource.ListenerType, "")
	good.recv(t)
	good.ack(t)
	badNode := node("ns/gw")
	badNode.Id = "envoy-bad"
	bad := openADSAs(t, conn, badNode, resource.ListenerType, "")
	bad.recv(t)
	bad.nack(t, "listener refused by the test")

	var entries map[string]*busv1.ProxyStatus
	testkit.Eventually(t, wait, "both streams in the proxies bucket, one ACKed and one NACKed", func() bool {
		entries = proxyEntries(t, h)
		g, b := entries["envoy-ns-gw"], entries["envoy-bad"]
		return g != nil && b != nil && typeOf(g, resource.ListenerType).GetAckedVersion() == "v1" &&
			typeOf(b, resource.ListenerType).GetNackedVersion() == "v1"
	})
	g, b := entries["envoy-ns-gw"], entries["envoy-bad"]
	for _, st := range []*busv1.ProxyStatus{g, b} {
		if st.GetNodeCluster() != "ns/gw" || st.GetReplica() != "xds-0" || st.GetStream() == "" || st.GetConnectedUnixNano() == 0 || st.GetUpdatedUnixNano() == 0 {
			t.Errorf("entry %+v", st)
		}
	}
	if l := typeOf(g, resource.ListenerType); l.GetSentVersion() != "v1" || l.GetNackedVersion() != "" || l.GetAckedUnixNano() == 0 {
		t.Errorf("the ACKing stream's listeners: %+v", l)
	}
	if l := typeOf(b, resource.ListenerType); l.GetNackDetail() != "listener refused by the test" || l.GetAckedVersion() == "v1" {
		t.Errorf("the NACKing stream's listeners: %+v", l)
	}
	testkit.Eventually(t, wait, "the stale gauge of the NACKing stream", func() bool {
		return h.gauge(t, "gatewire_xds_stream_stale_seconds", attrs("ns/gw", resource.ListenerType)...) > 0
	})

	bad.stream.CloseSend()
	good.stream.CloseSend()
	testkit.Eventually(t, wait, "the entries deleted when their streams end", func() bool { return len(proxyEntries(t, h)) == 0 })
}

// gauge is the value of a float gauge with the given attributes; 0 when
// absent.
func (h *harness) gauge(t *testing.T, name string, attrs ...attribute.KeyValue) float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect metrics: %v", err)
	}
	want := attribute.NewSet(attrs...)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			g, ok := m.Data.(metricdata.Gauge[float64])
			if m.Name != name || !ok {
				continue
			}
			for _, dp := range g.DataPoints {
				if dp.Attributes.Equals(&want) {
					return dp.Value
				}
			}
		}
	}
	return 0
}
