package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// proxyTestNow is the time the proxy-status tests print ages at.
var proxyTestNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// publishStreams publishes the gateway of testdata/configdump/tls.in.yaml
// and, as xds replicas would, four streams of it: one synced, one that
// holds an older route configuration, one that rejected the current one,
// and a proxyless client that asks for no secrets.
func publishStreams(t *testing.T, b *bus.Bus) {
	t.Helper()
	publishTranslation(t, b, "testdata/configdump/tls.in.yaml")
	served, err := servedVersions(context.Background(), b, bus.GatewayKey("default", "eg"))
	if err != nil {
		t.Fatal(err)
	}
	acked := func(urls ...string) []*busv1.ProxyTypeStatus {
		var out []*busv1.ProxyTypeStatus
		for _, u := range urls {
			v := served[u]
			out = append(out, &busv1.ProxyTypeStatus{TypeUrl: u, SentVersion: v, AckedVersion: v})
		}
		return out
	}
	all := []string{xdsbucket.ClusterType, xdsbucket.EndpointType, xdsbucket.ListenerType, xdsbucket.RouteType, xdsbucket.SecretType}
	stale := acked(all...)
	stale[3].AckedVersion = "0123456789abcdef"
	nacked := acked(all...)
	nacked[3].AckedVersion, nacked[3].NackedVersion = "0123456789abcdef", served[xdsbucket.RouteType]
	nacked[3].NackDetail = "Proto constraint validation failed (RouteConfigurationValidationError.VirtualHosts[0]: value is required)"
	proxyless := acked(xdsbucket.ClusterType, xdsbucket.EndpointType, xdsbucket.RouteType)
	proxyless = append(proxyless, &busv1.ProxyTypeStatus{TypeUrl: xdsbucket.ListenerType, SentVersion: served["proxyless"], AckedVersion: served["proxyless"]})
	streams := []*busv1.ProxyStatus{
		{NodeId: "default/eg/envoy-a", Replica: "xds-0", Stream: "1", Types: acked(all...), ConnectedUnixNano: proxyTestNow.Add(-time.Hour).UnixNano(), UserAgent: "envoy 1.36.2"},
		{NodeId: "default/eg/envoy-b", Replica: "xds-1", Stream: "4", Types: stale, ConnectedUnixNano: proxyTestNow.Add(-90 * time.Second).UnixNano(), UserAgent: "envoy 1.36.2"},
		{NodeId: "default/eg/envoy-c", Replica: "xds-1", Stream: "5", Types: nacked, ConnectedUnixNano: proxyTestNow.Add(-5 * time.Minute).UnixNano(), Delta: true, UserAgent: "envoy 1.35.0"},
		{NodeId: "default/eg/grpc-client", Replica: "xds-0", Stream: "2", Types: proxyless, Proxyless: true, ConnectedUnixNano: proxyTestNow.Add(-30 * time.Second).UnixNano(), UserAgent: "gRPC Go 1.85.0"},
	}
	for _, s := range streams {
		s.NodeCluster = "default/eg"
		if _, err := b.Put(context.Background(), bus.Proxies, bus.ProxyKey("default", "eg", s.Replica, s.Stream), s); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProxyStatus prints the streams of a gateway and compares them with
// testdata/proxystatus/<case>; run go test -update to rewrite them, then
// review the diff.
func TestProxyStatus(t *testing.T) {
	b := bustest.New(t)
	publishStreams(t, b)
	proxies, err := readProxies(context.Background(), b, ">", proxyTestNow)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, p := range proxies {
		for _, ty := range p.Types {
			states[p.NodeID+" "+ty.Type] = ty.State
		}
	}
	for key, want := range map[string]string{
		"default/eg/envoy-a CDS": stateSynced, "default/eg/envoy-a RDS": stateSynced,
		"default/eg/envoy-b RDS": stateStale, "default/eg/envoy-b CDS": stateSynced,
		"default/eg/envoy-c RDS": stateNacked, "default/eg/grpc-client LDS": stateSynced,
		"default/eg/grpc-client SDS": stateNotRequested,
	} {
		if states[key] != want {
			t.Errorf("%s: %s, want %s", key, states[key], want)
		}
	}
	for _, format := range []string{"table", "json"} {
		var out bytes.Buffer
		if err := printProxies(&out, format, proxies); err != nil {
			t.Fatal(err)
		}
		testkit.Golden(t, "testdata/proxystatus/streams."+format, out.Bytes())
	}
}

// TestProxyStatusCommand runs the command for one gateway and for one the
// bus does not have, and with bad arguments.
func TestProxyStatusCommand(t *testing.T) {
	b := bustest.New(t)
	publishStreams(t, b)
	out, err := runOnBus(b, runProxyStatus, "-o", "yaml", "default/eg")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "- connected:"); n != 4 {
		t.Errorf("%d streams printed, want 4:\n%s", n, out)
	}
	out, err = runOnBus(b, runProxyStatus, "other/gw")
	if err != nil || !strings.Contains(out, "no xDS client is connected") {
		t.Errorf("proxy-status of a gateway without streams: %q %v", out, err)
	}
	for _, args := range [][]string{{"-o", "xml"}, {"gw"}, {"a/b", "c/d"}} {
		if _, err := runOnBus(b, runProxyStatus, args...); !errors.Is(err, errUsage) {
			t.Errorf("proxy-status %q: %v, want a usage error", args, err)
		}
	}
}
