package bootstrap_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
)

// renderCase is the .in.yaml of a golden case: the options to render with.
type renderCase struct {
	Cluster    string `json:"cluster"`
	NodeID     string `json:"nodeID"`
	XDSAddress string `json:"xdsAddress"`
	AdminPort  uint32 `json:"adminPort"`
	// ReadinessPort adds the readiness listener (Kubernetes mode).
	ReadinessPort uint32 `json:"readinessPort"`
	// TLS connects over mTLS; a case without it is the insecure mode.
	TLS *tlsCase `json:"tls"`
}

type tlsCase struct {
	CertificateSDS string `json:"certificateSDS"`
	TrustedCASDS   string `json:"trustedCASDS"`
	ServerID       string `json:"serverID"`
}

func (c renderCase) tls() *bootstrap.TLS {
	if c.TLS == nil {
		return nil
	}
	return &bootstrap.TLS{CertificateSDS: c.TLS.CertificateSDS, TrustedCASDS: c.TLS.TrustedCASDS, ServerID: c.TLS.ServerID}
}

// TestRenderGolden renders testdata/render/<case>.in.yaml and compares the YAML
// with <case>.out.yaml; go test -update rewrites the .out.yaml files.
func TestRenderGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/render/*.in.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			var c renderCase
			readYAML(t, in, &c)
			b, err := bootstrap.Render(bootstrap.Options{
				Cluster: c.Cluster, NodeID: c.NodeID, XDSAddress: c.XDSAddress, AdminPort: c.AdminPort,
				ReadinessPort: c.ReadinessPort, TLS: c.tls(),
			})
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got, err := bootstrap.MarshalYAML(b)
			if err != nil {
				t.Fatalf("MarshalYAML: %v", err)
			}
			testkit.Golden(t, strings.TrimSuffix(in, ".in.yaml")+".out.yaml", got)
			checkEnvoyReads(t, got, c)
		})
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkEnvoyReads parses the YAML the way Envoy does (YAML to JSON to proto)
// and checks what makes an Envoy reach the right xds server for its gateway.
func checkEnvoyReads(t *testing.T, data []byte, c renderCase) {
	t.Helper()
	raw, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("YAMLToJSON: %v", err)
	}
	b := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(raw, b); err != nil {
		t.Fatalf("protojson.Unmarshal: %v", err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("ValidateAll: %v", err)
	}
	if got := b.GetNode().GetCluster(); got != c.Cluster {
		t.Errorf("node.cluster = %q, want %q", got, c.Cluster)
	}
	ads := b.GetDynamicResources().GetAdsConfig()
	if ads.GetApiType() != corev3.ApiConfigSource_GRPC || ads.GetTransportApiVersion() != corev3.ApiVersion_V3 {
		t.Errorf("ads_config = %v, want GRPC over V3", ads)
	}
	if got := ads.GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName(); got != bootstrap.XDSClusterName {
		t.Errorf("ads cluster = %q, want %q", got, bootstrap.XDSClusterName)
	}
	for _, src := range []*corev3.ConfigSource{b.GetDynamicResources().GetLdsConfig(), b.GetDynamicResources().GetCdsConfig()} {
		if src.GetAds() == nil || src.GetResourceApiVersion() != corev3.ApiVersion_V3 {
			t.Errorf("lds/cds config = %v, want ads with V3", src)
		}
	}
	checkXDSCluster(t, b, c.XDSAddress)
	checkXDSTLS(t, b, c)
	checkReadiness(t, b, c)
}

// checkXDSTLS checks the xds cluster's TLS: present exactly in the TLS cases,
// TLS 1.3 with h2, the client certificate and CA from the SDS files, the
// server's SPIFFE ID required.
func checkXDSTLS(t *testing.T, b *bootstrapv3.Bootstrap, c renderCase) {
	t.Helper()
	ts := findCluster(b, bootstrap.XDSClusterName).GetTransportSocket()
	if c.TLS == nil {
		if ts != nil {
			t.Errorf("insecure case with a transport socket: %v", ts)
		}
		return
	}
	if ts.GetName() != "envoy.transport_sockets.tls" {
		t.Fatalf("xds cluster transport socket = %v, want TLS", ts)
	}
	var up tlsv3.UpstreamTlsContext
	if err := ts.GetTypedConfig().UnmarshalTo(&up); err != nil {
		t.Fatal(err)
	}
	common := up.GetCommonTlsContext()
	if common.GetTlsParams().GetTlsMinimumProtocolVersion() != tlsv3.TlsParameters_TLSv1_3 || !slices.Equal(common.GetAlpnProtocols(), []string{"h2"}) {
		t.Errorf("tls params %v, alpn %v: want TLS 1.3 and h2", common.GetTlsParams(), common.GetAlpnProtocols())
	}
	certs := common.GetTlsCertificateSdsSecretConfigs()
	if len(certs) != 1 || certs[0].GetSdsConfig().GetPathConfigSource().GetPath() != c.TLS.CertificateSDS {
		t.Errorf("client certificate SDS = %v, want the file %s", certs, c.TLS.CertificateSDS)
	}
	combined := common.GetCombinedValidationContext()
	if got := combined.GetValidationContextSdsSecretConfig().GetSdsConfig().GetPathConfigSource().GetPath(); got != c.TLS.TrustedCASDS {
		t.Errorf("CA SDS file %q, want %s", got, c.TLS.TrustedCASDS)
	}
	sans := combined.GetDefaultValidationContext().GetMatchTypedSubjectAltNames()
	if len(sans) != 1 || sans[0].GetSanType() != tlsv3.SubjectAltNameMatcher_URI || sans[0].GetMatcher().GetExact() != c.TLS.ServerID {
		t.Errorf("server SAN match %v, want the URI %s", sans, c.TLS.ServerID)
	}
}

// checkReadiness checks the readiness listener and its admin cluster: present
// exactly when a readiness port is asked for.
func checkReadiness(t *testing.T, b *bootstrapv3.Bootstrap, c renderCase) {
	t.Helper()
	listeners := b.GetStaticResources().GetListeners()
	admin := findCluster(b, bootstrap.AdminClusterName)
	if c.ReadinessPort == 0 {
		if len(listeners) != 0 || admin != nil {
			t.Errorf("static listeners %v and admin cluster %v without a readiness port", listeners, admin)
		}
		return
	}
	if len(listeners) != 1 || listeners[0].GetName() != bootstrap.ReadinessListenerName {
		t.Fatalf("static listeners = %v, want only %s", listeners, bootstrap.ReadinessListenerName)
	}
	sa := listeners[0].GetAddress().GetSocketAddress()
	if sa.GetAddress() != "0.0.0.0" || sa.GetPortValue() != c.ReadinessPort {
		t.Errorf("readiness listener on %s:%d, want 0.0.0.0:%d", sa.GetAddress(), sa.GetPortValue(), c.ReadinessPort)
	}
	if admin == nil {
		t.Fatalf("no static cluster %s", bootstrap.AdminClusterName)
	}
	up := admin.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if up.GetAddress() != bootstrap.AdminAddress || up.GetPortValue() != c.AdminPort {
		t.Errorf("admin cluster points at %s:%d, want %s:%d", up.GetAddress(), up.GetPortValue(), bootstrap.AdminAddress, c.AdminPort)
	}
}

func findCluster(b *bootstrapv3.Bootstrap, name string) *clusterv3.Cluster {
	for _, c := range b.GetStaticResources().GetClusters() {
		if c.GetName() == name {
			return c
		}
	}
	return nil
}

func checkXDSCluster(t *testing.T, b *bootstrapv3.Bootstrap, address string) {
	t.Helper()
	xds := findCluster(b, bootstrap.XDSClusterName)
	if xds == nil {
		t.Fatalf("static clusters = %v, want %s", b.GetStaticResources().GetClusters(), bootstrap.XDSClusterName)
	}
	sa := xds.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	got := net.JoinHostPort(sa.GetAddress(), strconv.FormatUint(uint64(sa.GetPortValue()), 10))
	if address == "" {
		address = bootstrap.DefaultXDSAddress
	}
	if got != address {
		t.Errorf("xds cluster address = %s, want %s", got, address)
	}
	if _, ok := xds.GetTypedExtensionProtocolOptions()["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]; !ok {
		t.Errorf("xds cluster has no HttpProtocolOptions (HTTP/2 is required for gRPC)")
	}
}

func TestRenderDefaults(t *testing.T) {
	b, err := bootstrap.Render(bootstrap.Options{Cluster: "default/eg"})
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.GetNode().GetId(), "default/eg/"+host; got != want {
		t.Errorf("node.id = %q, want %q", got, want)
	}
	checkXDSCluster(t, b, bootstrap.DefaultXDSAddress)
	if got := b.GetStaticResources().GetClusters()[0].GetType(); got != clusterv3.Cluster_STATIC {
		t.Errorf("cluster type = %v, want STATIC for an IP address", got)
	}
}

func TestRenderRejects(t *testing.T) {
	for name, opts := range map[string]bootstrap.Options{
		"empty cluster":      {NodeID: "x"},
		"cluster no slash":   {Cluster: "eg", NodeID: "x"},
		"cluster no gateway": {Cluster: "default/", NodeID: "x"},
		"cluster two slashs": {Cluster: "a/b/c", NodeID: "x"},
		"address no port":    {Cluster: "default/eg", NodeID: "x", XDSAddress: "localhost"},
		"address no host":    {Cluster: "default/eg", NodeID: "x", XDSAddress: ":18000"},
		"address port zero":  {Cluster: "default/eg", NodeID: "x", XDSAddress: "localhost:0"},
		"address port big":   {Cluster: "default/eg", NodeID: "x", XDSAddress: "localhost:70000"},
		"readiness no admin": {Cluster: "default/eg", NodeID: "x", ReadinessPort: 19001},
		"readiness is admin": {Cluster: "default/eg", NodeID: "x", AdminPort: 19001, ReadinessPort: 19001},
	} {
		t.Run(name, func(t *testing.T) {
			if b, err := bootstrap.Render(opts); err == nil {
				t.Errorf("Render(%+v) = %v, want an error", opts, b)
			}
		})
	}
}

// TestMarshalRoundTrip checks that both encodings read back to the same proto
// and that marshalling twice gives the same bytes.
func TestMarshalRoundTrip(t *testing.T) {
	b, err := bootstrap.Render(bootstrap.Options{
		Cluster: "default/eg", NodeID: "default/eg/a", XDSAddress: "xds:18000", AdminPort: 19000, ReadinessPort: 19001,
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, marshal := range map[string]func(*bootstrapv3.Bootstrap) ([]byte, error){
		"json": bootstrap.MarshalJSON,
		"yaml": bootstrap.MarshalYAML,
	} {
		t.Run(name, func(t *testing.T) {
			first, err := marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			second, err := marshal(proto.Clone(b).(*bootstrapv3.Bootstrap))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, second) {
				t.Errorf("two marshals differ:\n%s\n%s", first, second)
			}
			back, err := bootstrap.Unmarshal(first)
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !proto.Equal(back, b) {
				t.Errorf("round trip differs:\n got %v\nwant %v", back, b)
			}
		})
	}
}
