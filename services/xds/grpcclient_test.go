package xds

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/xds" // the xds:/// resolver and gRPC-Go's xDS client
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// gRPC-Go reads its xDS bootstrap from the environment when its packages
// load, so its client runs in a child process: this test binary, run with
// grpcTargetEnv and the bootstrap set, and -test.run selecting
// TestGRPCClientProcess.
const grpcTargetEnv = "GATEWIRE_XDS_TEST_GRPC_TARGET"

// grpcTarget is the xds:/// target of the child's channel; its listener
// (the gRPC "API listener") has the same name.
const grpcListener = "echo.example"

// TestGRPCClientProcess is the body of the child process: it opens an xDS
// channel to the target in grpcTargetEnv and keeps it until its standard
// input closes. Run as a plain test it has nothing to do.
func TestGRPCClientProcess(t *testing.T) {
	target := os.Getenv(grpcTargetEnv)
	if target == "" {
		return
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("grpc client for %s: %v", target, err)
	}
	defer func() { _ = conn.Close() }()
	conn.Connect() // leaves idle: the resolver starts its xDS watches
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startGRPCClient runs gRPC-Go's xDS client in a child process against the
// xDS server at addr, as a node of nodeCluster, until the test ends. Its
// output is logged when the test fails.
func startGRPCClient(t *testing.T, addr, nodeCluster string) {
	t.Helper()
	bootstrap, err := json.Marshal(map[string]any{
		"xds_servers": []any{map[string]any{
			"server_uri":      addr,
			"channel_creds":   []any{map[string]string{"type": "insecure"}},
			"server_features": []string{"xds_v3"},
		}},
		"node": map[string]string{"id": "grpc-client", "cluster": nodeCluster},
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGRPCClientProcess$", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GRPC_XDS_BOOTSTRAP") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env,
		"GRPC_XDS_BOOTSTRAP_CONFIG="+string(bootstrap),
		grpcTargetEnv+"=xds:///"+grpcListener,
		"GRPC_GO_LOG_SEVERITY_LEVEL=info",
	)
	out := &logBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the gRPC client: %v", err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(wait):
			_ = cmd.Process.Kill()
			err = fmt.Errorf("killed after %s: %w", wait, <-done)
		}
		if err != nil || t.Failed() {
			t.Logf("gRPC client (exit: %v):\n%s", err, out.lines())
		}
	})
}

// grpcSnapshot is a snapshot for gRPC-Go's xDS client: an API listener
// named grpcListener with its routes inline, and the sample cluster and
// endpoints. gRPC NACKs the listener when xffHops is not 0 (gRFC A41).
func grpcSnapshot(t *testing.T, version string, xffHops uint32) *busv1.XdsSnapshot {
	t.Helper()
	manager := &hcm.HttpConnectionManager{
		StatPrefix:        grpcListener,
		XffNumTrustedHops: xffHops,
		RouteSpecifier: &hcm.HttpConnectionManager_RouteConfig{RouteConfig: &route.RouteConfiguration{
			Name: grpcListener,
			VirtualHosts: []*route.VirtualHost{{
				Name:    grpcListener,
				Domains: []string{"*"},
				Routes: []*route.Route{{
					Match: &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
					Action: &route.Route_Route{Route: &route.RouteAction{
						ClusterSpecifier: &route.RouteAction_Cluster{Cluster: xdstest.ClusterName},
					}},
				}},
			}},
		}},
		HttpFilters: []*hcm.HttpFilter{{
			Name:       "envoy.filters.http.router",
			ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &router.Router{})},
		}},
	}
	return mustSnapshot(t, version,
		&listener.Listener{Name: grpcListener, ApiListener: &listener.ApiListener{ApiListener: mustAny(t, manager)}},
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", xdstest.BackendPort),
	)
}

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
