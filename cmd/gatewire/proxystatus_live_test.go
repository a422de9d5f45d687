package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	"github.com/gatewire/gatewire/services/xds"
)

// TestProxyStatusOfLiveStreams runs the xds service over mTLS with the
// translation of testdata/configdump/tls.in.yaml, connects two of
// go-control-plane's ADS clients of gateway default/eg, one that ACKs the
// clusters and one that NACKs them, and reads `gatewire proxy-status -o
// json` until it shows both, from the entries the service wrote.
func TestProxyStatusOfLiveStreams(t *testing.T) {
	b := bustest.New(t)
	publishTranslation(t, b, "testdata/configdump/tls.in.yaml")
	ca := certstest.CA(t, "proxy-status test CA")
	server := certstest.XDSServer(t, ca)
	cfg := xds.DefaultConfig()
	cfg.ReplicaID = "xds-0"
	cfg.CertFile, cfg.KeyFile, cfg.CAFile = server.Cert, server.Key, server.CA
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	xs, err := xds.New(cfg, b, slog.New(slog.DiscardHandler), xds.WithListener(l))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- xs.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("xds Run: %v", err)
		}
	})
	tlsCfg, err := certs.ClientConfig(certstest.Gateway(t, ca, "default", "eg"), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, c := range []struct {
		node string
		nack bool
	}{{"envoy-acks", false}, {"envoy-nacks", true}} {
		client := sotw.NewADSClient(ctx, &core.Node{Id: c.node, Cluster: "default/eg", UserAgentName: "envoy"}, xdsbucket.ClusterType)
		if err := client.InitConnect(conn); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Fetch(); err != nil {
			t.Fatalf("%s: %v", c.node, err)
		}
		if c.nack {
			err = client.Nack("cluster refused by the test")
		} else {
			err = client.Ack()
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	want := map[string]string{"envoy-acks": stateSynced, "envoy-nacks": stateNacked}
	var views []proxyView
	out := testkit.EventuallyValue(t, 10*time.Second, fmt.Sprintf("proxy-status to show %v", want), func() (string, bool) {
		out, err := runOnBus(b, runProxyStatus, "-o", "json", "default/eg")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &views); err != nil {
			t.Fatalf("proxy-status -o json: %v\n%s", err, out)
		}
		got := map[string]string{}
		for _, v := range views {
			for _, ty := range v.Types {
				if ty.Type == "CDS" {
					got[v.NodeID] = ty.State
				}
			}
		}
		return out, len(views) == 2 && got["envoy-acks"] == want["envoy-acks"] && got["envoy-nacks"] == want["envoy-nacks"]
	})
	t.Logf("proxy-status -o json:\n%s", out)
	for _, v := range views {
		if v.Gateway != "default/eg" || v.Replica != "xds-0" || v.UserAgent != "envoy" || v.Since.IsZero() {
			t.Errorf("stream %+v", v)
		}
		for _, ty := range v.Types {
			if ty.Type == "CDS" && v.NodeID == "envoy-nacks" && ty.NackInfo != "cluster refused by the test" {
				t.Errorf("the NACK detail is %q", ty.NackInfo)
			}
			if ty.Type != "CDS" && ty.State != stateNotRequested {
				t.Errorf("%s %s: %s, want %s", v.NodeID, ty.Type, ty.State, stateNotRequested)
			}
		}
	}
}
