package proxyless

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	_ "google.golang.org/grpc/xds" // the xds:/// resolver and gRPC-Go's xDS client
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
)

// resultPrefix starts each result line the child writes, so that nothing
// else on its standard output is taken for one.
const resultPrefix = "RESULT "

// The methods the client calls.
const (
	unaryCall         = "/grpc.testing.TestService/UnaryCall"
	emptyCall         = "/grpc.testing.TestService/EmptyCall"
	unimplementedCall = "/grpc.testing.TestService/UnimplementedCall"
	healthCheck       = "/grpc.health.v1.Health/Check"
)

// callRequest asks the child to call method on target n times, with the
// headers as request metadata.
type callRequest struct {
	Target  string            `json:"target"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers,omitempty"`
	N       int               `json:"n"`
}

// callResult is what n calls gave: the calls that succeeded by the backend
// that answered, the calls that failed by gRPC code, and the last error.
type callResult struct {
	Backends  map[string]int `json:"backends"`
	Codes     map[string]int `json:"codes"`
	LastError string         `json:"last_error,omitempty"`
}

// callTimeout bounds one call in the child. A channel waits for its first
// xDS configuration within it.
const callTimeout = 10 * time.Second

// TestClientProcess is the body of the child process: it answers call
// requests on its standard input until it closes, keeping one channel per
// target. Run as a plain test it has nothing to do.
func TestClientProcess(t *testing.T) {
	if !testkit.InChild("TestClientProcess") {
		return
	}
	conns := map[string]*grpc.ClientConn{}
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req callRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			t.Fatalf("call request %q: %v", in.Text(), err)
		}
		conn := conns[req.Target]
		if conn == nil {
			var err error
			conn, err = grpc.NewClient(req.Target, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatalf("grpc client for %s: %v", req.Target, err)
			}
			conns[req.Target] = conn
		}
		out, err := json.Marshal(calls(conn, req))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s%s\n", resultPrefix, out)
	}
}

// calls makes the calls of req on conn.
func calls(conn *grpc.ClientConn, req callRequest) callResult {
	res := callResult{Backends: map[string]int{}, Codes: map[string]int{}}
	for range req.N {
		backend, err := call(conn, req)
		if err != nil {
			res.Codes[status.Code(err).String()]++
			res.LastError = err.Error()
			continue
		}
		res.Backends[backend]++
	}
	return res
}

// call makes one call and returns the backend that answered it.
func call(conn *grpc.ClientConn, req callRequest) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	ctx = metadata.NewOutgoingContext(ctx, metadata.New(req.Headers))
	var in, out proto.Message
	switch req.Method {
	case unaryCall:
		in, out = &testgrpc.SimpleRequest{}, &testgrpc.SimpleResponse{}
	case healthCheck:
		in, out = &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}
	default:
		in, out = &testgrpc.Empty{}, &testgrpc.Empty{}
	}
	var header metadata.MD
	if err := conn.Invoke(ctx, req.Method, in, out, grpc.Header(&header)); err != nil {
		return "", err
	}
	if v := header.Get(backendHeader); len(v) == 1 {
		return v[0], nil
	}
	return "", fmt.Errorf("answer without a %s header", backendHeader)
}

// client is the parent's end of a gRPC client process.
type client struct{ *testkit.Child }

// startClient runs a gRPC-Go client process whose xDS server is g's, as a
// proxyless node of nodeCluster, until the test ends. Its bootstrap is the
// one gatewire renders (bootstrap.RenderProxyless): TLS channel credentials
// with the gateway's client certificate, read by gRPC's file_watcher
// provider. Its logs are shown when the test fails.
func startClient(t *testing.T, g *gatewire, nodeCluster string) *client {
	t.Helper()
	return startClientWith(t, g.xdsAddr, nodeCluster, g.clientCertDir(t, nodeCluster))
}

// startClientWith is startClient with the client's certificate folder.
func startClientWith(t *testing.T, xdsAddr, nodeCluster, certDir string) *client {
	t.Helper()
	bs, err := bootstrap.RenderProxyless(bootstrap.ProxylessOptions{
		Cluster: nodeCluster, NodeID: "proxyless-test", XDSAddress: xdsAddr, CertDir: certDir,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &client{testkit.StartChild(t, testkit.ChildOptions{
		Test: "TestClientProcess", XDSBootstrap: bs, Stdout: true,
		Env: []string{"GRPC_GO_LOG_SEVERITY_LEVEL=warning"},
	})}
}

// call has the child make the calls of req and returns what they gave.
func (c *client) call(t *testing.T, req callRequest) callResult {
	t.Helper()
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stdin.Write(append(line, '\n')); err != nil {
		t.Fatalf("send %s to the gRPC client: %v", line, err)
	}
	for c.Stdout.Scan() {
		text, ok := strings.CutPrefix(c.Stdout.Text(), resultPrefix)
		if !ok {
			continue
		}
		var res callResult
		if err := json.Unmarshal([]byte(text), &res); err != nil {
			t.Fatalf("result %q: %v", text, err)
		}
		return res
	}
	t.Fatalf("the gRPC client ended without a result for %s: %v", line, c.Stdout.Err())
	return callResult{}
}

// until repeats req until ok accepts its result, and returns that result.
func (c *client) until(t *testing.T, what string, req callRequest, ok func(callResult) bool) callResult {
	t.Helper()
	return testkit.EventuallyValue(t, wait, what, func() (callResult, bool) {
		res := c.call(t, req)
		return res, ok(res)
	})
}

func (r callResult) String() string {
	return fmt.Sprintf("backends %v, failures %v (last: %s)", r.Backends, r.Codes, r.LastError)
}

// only reports whether every call succeeded on the named backend.
func (r callResult) only(backend string) bool {
	return len(r.Codes) == 0 && len(r.Backends) == 1 && r.Backends[backend] > 0
}
