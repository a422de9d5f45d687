package xds

import (
	"encoding/json"
	"io"
	"os"
	"testing"

	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/xds" // the xds:/// resolver and gRPC-Go's xDS client
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// gRPC-Go reads its xDS bootstrap from the environment when its packages
// load, so its client runs in a child process (testkit.StartChild): this
// test binary, running TestGRPCClientProcess with the bootstrap and
// grpcTargetEnv set.
const (
	grpcChild     = "TestGRPCClientProcess"
	grpcTargetEnv = "GATEWIRE_XDS_TEST_GRPC_TARGET"
)

// grpcTarget is the xds:/// target of the child's channel; its listener
// (the gRPC "API listener") has the same name.
const grpcListener = "echo.example"

// TestGRPCClientProcess is the body of the child process: it opens an xDS
// channel to the target in grpcTargetEnv and keeps it until its standard
// input closes. Run as a plain test it has nothing to do.
func TestGRPCClientProcess(t *testing.T) {
	if !testkit.InChild(grpcChild) {
		return
	}
	target := os.Getenv(grpcTargetEnv)
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("grpc client for %s: %v", target, err)
	}
	defer func() { _ = conn.Close() }()
	conn.Connect() // leaves idle: the resolver starts its xDS watches
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startGRPCClient runs gRPC-Go's xDS client in a child process against the
// xDS server at addr, as a proxyless node of nodeCluster, until the test
// ends. Its output is logged when the test fails.
func startGRPCClient(t *testing.T, addr, nodeCluster string) {
	t.Helper()
	bootstrap, err := json.Marshal(map[string]any{
		"xds_servers": []any{map[string]any{
			"server_uri":      addr,
			"channel_creds":   []any{map[string]string{"type": "insecure"}},
			"server_features": []string{"xds_v3"},
		}},
		"node": map[string]any{
			"id": "grpc-client", "cluster": nodeCluster,
			"metadata": map[string]any{ProxylessMetadataKey: true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	testkit.StartChild(t, testkit.ChildOptions{
		Test:         grpcChild,
		XDSBootstrap: bootstrap,
		Env:          []string{grpcTargetEnv + "=xds:///" + grpcListener, "GRPC_GO_LOG_SEVERITY_LEVEL=info"},
	})
}

// grpcSnapshot is the sample snapshot with an API listener for gRPC-Go's
// xDS client, named grpcListener, that takes the sample routes over ADS.
// gRPC NACKs the listener when xffHops is not 0 (gRFC A41).
func grpcSnapshot(t *testing.T, version string, xffHops uint32) *busv1.XdsSnapshot {
	t.Helper()
	x := xdstest.Sample(gateway, version)
	api := xdstest.APIListener(grpcListener, xdstest.RouteName)
	manager := &hcm.HttpConnectionManager{}
	if err := api.GetApiListener().GetApiListener().UnmarshalTo(manager); err != nil {
		t.Fatal(err)
	}
	manager.XffNumTrustedHops = xffHops
	api.ApiListener.ApiListener = mustAny(t, manager)
	x.ProxylessListeners = []*anypb.Any{mustAny(t, api)}
	return x
}

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
