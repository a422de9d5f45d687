package integration

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// response is what a recorder keeps of one xDS response: when it arrived
// (Fetch returned, before anything was decoded), how many resources it
// held and, for route configurations, how many virtual hosts.
type response struct {
	at        time.Time
	resources int
	vhosts    int // route configurations only
}

// recorder is an ADS client, go-control-plane's, one stream per resource
// type, that may connect before the server listens (it waits for it) and
// keeps every response it was sent, in order. It ACKs each response as
// soon as it arrives and does not validate resources: it is there to tell
// what a gateway's Envoy was sent and when. The raw route configurations
// of the last response are kept, so that an edit can be looked for in
// their bytes without decoding them.
type recorder struct {
	mu        sync.Mutex
	responses map[string][]response // type URL → in arrival order
	routes    []*anypb.Any          // of the last route response
	changed   chan struct{}
	errs      []error
}

// envoyWindow is Envoy's default HTTP/2 flow control window, of a stream
// and of a connection (initial_stream_window_size and
// initial_connection_window_size): 256 MiB. gRPC-Go's default window
// starts at 64 KiB and grows with its estimate of the connection's
// bandwidth-delay product, which on loopback stays small, so a response
// of megabytes would wait for many window updates that an Envoy never
// asks for.
const envoyWindow = 256 << 20

// record connects a recorder as an Envoy of nodeCluster to xdsAddr over
// creds. It returns at once: the streams open when the server listens.
func record(t testing.TB, xdsAddr, nodeCluster string, creds credentials.TransportCredentials) *recorder {
	t.Helper()
	conn, err := grpc.NewClient(xdsAddr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)),
		grpc.WithInitialWindowSize(envoyWindow), grpc.WithInitialConnWindowSize(envoyWindow),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.2, MaxDelay: 100 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{responses: map[string][]response{}, changed: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); conn.Close(); wg.Wait() })
	node := &core.Node{Id: "recorder-" + nodeCluster, Cluster: nodeCluster}
	for _, typeURL := range envoyTypes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := sotw.NewADSClient(ctx, node, typeURL)
			if err := c.InitConnect(conn, grpc.WaitForReady(true)); err != nil {
				r.fail(fmt.Errorf("%s: connect: %w", typeURL, err))
				return
			}
			r.follow(ctx, c, typeURL)
		}()
	}
	return r
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *recorder) follow(ctx context.Context, c sotw.ADSClient, typeURL string) {
	for ctx.Err() == nil {
		resp, err := c.Fetch()
		if err != nil {
			if ctx.Err() == nil {
				r.fail(fmt.Errorf("%s: %w", typeURL, err))
			}
			return
		}
		got := response{at: time.Now(), resources: len(resp.Resources)}
		_ = c.Ack()
		if typeURL == resource.RouteType {
			got.vhosts = countVhosts(resp.Resources)
		}
		r.mu.Lock()
		r.responses[typeURL] = append(r.responses[typeURL], got)
		if typeURL == resource.RouteType {
			r.routes = resp.Resources
		}
		r.mu.Unlock()
		select {
		case r.changed <- struct{}{}:
		default:
		}
	}
}

// countVhosts is the number of virtual hosts of the route configurations
// in resources; -1 when one does not decode.
func countVhosts(resources []*anypb.Any) int {
	n := 0
	for _, a := range resources {
		c := vhostsIn(a.GetValue())
		if c < 0 {
			return -1
		}
		n += c
	}
	return n
}

// vhostsIn counts the virtual_hosts fields (number 2) of an encoded
// RouteConfiguration without decoding it: -1 if it is not one. Decoding
// the megabytes of a large gateway's route configuration on every
// response left the recorder's process with tens of MiB of garbage, and
// its collections delayed the arrival of the next response.
func vhostsIn(b []byte) int {
	const virtualHosts = 2 // route.RouteConfiguration's field
	n := 0
	for len(b) > 0 {
		num, typ, size := protowire.ConsumeTag(b)
		if size < 0 {
			return -1
		}
		b = b[size:]
		if num == virtualHosts && typ == protowire.BytesType {
			n++
		}
		size = protowire.ConsumeFieldValue(num, typ, b)
		if size < 0 {
			return -1
		}
		b = b[size:]
	}
	return n
}

// seen returns a copy of the responses of typeURL so far.
func (r *recorder) seen(typeURL string) []response {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]response(nil), r.responses[typeURL]...)
}

// routesContain reports whether the last route response holds b in the
// bytes of one of its route configurations.
func (r *recorder) routesContain(b []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.routes {
		if bytes.Contains(a.GetValue(), b) {
			return true
		}
	}
	return false
}

// waitFor waits until cond holds, checked after every response, and
// returns the arrival time of the last response of typeURL when it first
// did.
func (r *recorder) waitFor(t testing.TB, timeout time.Duration, what, typeURL string, cond func() bool) time.Time {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if cond() {
			got := r.seen(typeURL)
			if len(got) == 0 {
				return time.Now()
			}
			return got[len(got)-1].at
		}
		select {
		case <-r.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			r.mu.Lock()
			errs := r.errs
			r.mu.Unlock()
			t.Fatalf("ADS recorder: %s not seen within %s (errors: %v); got %s", what, timeout, errs, r)
		}
	}
}

// complete reports whether the last responses hold one listener, n
// virtual hosts and 2n clusters and endpoint assignments, the shape of
// gatewaytest's tenant routes.
func (r *recorder) complete(n int) bool {
	last := func(typeURL string) response {
		got := r.seen(typeURL)
		if len(got) == 0 {
			return response{}
		}
		return got[len(got)-1]
	}
	return last(resource.ListenerType).resources >= 1 && last(resource.RouteType).vhosts == n &&
		last(resource.ClusterType).resources == 2*n && last(resource.EndpointType).resources == 2*n
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := ""
	for _, typeURL := range envoyTypes {
		out += fmt.Sprintf("\n  %s:", typeURL)
		for _, resp := range r.responses[typeURL] {
			out += fmt.Sprintf(" [%d resources, %d vhosts]", resp.resources, resp.vhosts)
		}
	}
	return out
}

// TestVhostsIn checks the recorder's count of virtual hosts against a
// decoded RouteConfiguration.
func TestVhostsIn(t *testing.T) {
	rc := &route.RouteConfiguration{Name: "http-80", VirtualHosts: []*route.VirtualHost{
		{Name: "a", Domains: []string{"a.example"}}, {Name: "b"}, {Name: "c", Routes: []*route.Route{{Name: "r"}}},
	}}
	b, err := proto.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	if got := vhostsIn(b); got != 3 {
		t.Errorf("vhostsIn = %d, want 3", got)
	}
	if got := vhostsIn(b[:len(b)-1]); got != -1 {
		t.Errorf("vhostsIn of a truncated configuration = %d, want -1", got)
	}
}
