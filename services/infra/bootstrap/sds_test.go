package bootstrap_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
)

// TestSDSFilesGolden renders the SDS files of a mounted certificate Secret
// and reads them back as Envoy does: one Secret each, with the files of the
// folder, watching the folder.
func TestSDSFilesGolden(t *testing.T) {
	cert, ca, err := bootstrap.SDSFiles("/etc/envoy/xds-tls")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "testdata/sds/certificate.sds.json", cert)
	testkit.Golden(t, "testdata/sds/trusted-ca.sds.json", ca)
	for _, f := range []struct {
		data []byte
		name string
	}{{cert, bootstrap.ClientCertificateSecret}, {ca, bootstrap.TrustedCASecret}} {
		var resp discoveryv3.DiscoveryResponse
		if err := protojson.Unmarshal(f.data, &resp); err != nil {
			t.Fatal(err)
		}
		if len(resp.GetResources()) != 1 {
			t.Fatalf("%s: %d resources, Envoy wants exactly one", f.name, len(resp.GetResources()))
		}
		var secret tlsv3.Secret
		if err := resp.GetResources()[0].UnmarshalTo(&secret); err != nil {
			t.Fatal(err)
		}
		if err := secret.ValidateAll(); err != nil || secret.GetName() != f.name {
			t.Errorf("secret %q: %v", secret.GetName(), err)
		}
		dir := secret.GetTlsCertificate().GetWatchedDirectory().GetPath() + secret.GetValidationContext().GetWatchedDirectory().GetPath()
		if dir != "/etc/envoy/xds-tls" {
			t.Errorf("%s watches %q, want the certificate folder", f.name, dir)
		}
	}
	if _, _, err := bootstrap.SDSFiles("relative/dir"); err == nil {
		t.Error("SDSFiles accepted a relative folder")
	}
}

type proxylessCase struct {
	Cluster         string `json:"cluster"`
	NodeID          string `json:"nodeID"`
	XDSAddress      string `json:"xdsAddress"`
	CertDir         string `json:"certDir"`
	RefreshInterval string `json:"refreshInterval"` // a time.Duration
}

// TestRenderProxylessGolden renders testdata/proxyless/<case>.in.yaml into
// <case>.out.json (go test -update rewrites them); integration/proxyless
// runs real gRPC-Go clients on what it renders.
func TestRenderProxylessGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/proxyless/*.in.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			var c proxylessCase
			readYAML(t, in, &c)
			var refresh time.Duration
			if c.RefreshInterval != "" {
				if refresh, err = time.ParseDuration(c.RefreshInterval); err != nil {
					t.Fatal(err)
				}
			}
			got, err := bootstrap.RenderProxyless(bootstrap.ProxylessOptions{
				Cluster: c.Cluster, NodeID: c.NodeID, XDSAddress: c.XDSAddress, CertDir: c.CertDir, RefreshInterval: refresh,
			})
			if err != nil {
				t.Fatal(err)
			}
			testkit.Golden(t, strings.TrimSuffix(in, ".in.yaml")+".out.json", got)
		})
	}
	for _, o := range []bootstrap.ProxylessOptions{
		{Cluster: "no-slash"},
		{Cluster: "a/b", CertDir: "relative"},
		{Cluster: "a/b", CertDir: "/abs", RefreshInterval: time.Millisecond},
		{Cluster: "a/b", XDSAddress: "no-port"},
	} {
		if _, err := bootstrap.RenderProxyless(o); err == nil {
			t.Errorf("RenderProxyless(%+v) accepted it", o)
		}
	}
}
