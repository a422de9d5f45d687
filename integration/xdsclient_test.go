package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"
)

// validator is what every Envoy resource implements.
type validator interface{ ValidateAll() error }

// envoy acts as one Envoy of a gateway: go-control-plane's ADS client, one
// stream per resource type, ACKing every response whose resources pass
// ValidateAll and NACKing the others.
type envoy struct {
	mu      sync.Mutex
	state   map[string]map[string]proto.Message // type URL → name → resource
	changed chan struct{}
	errs    []error
}

var envoyTypes = []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType}

// connectEnvoyWith connects an Envoy of nodeCluster over creds (mTLS with
// a gateway's certificate, see gatewayCreds).
func connectEnvoyWith(t testing.TB, xdsAddr, nodeCluster string, creds credentials.TransportCredentials) *envoy {
	t.Helper()
	conn, err := grpc.NewClient(xdsAddr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &envoy{state: map[string]map[string]proto.Message{}, changed: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); conn.Close(); wg.Wait() })
	node := &core.Node{Id: "it-" + nodeCluster, Cluster: nodeCluster}
	for _, typeURL := range envoyTypes {
		c := sotw.NewADSClient(ctx, node, typeURL)
		if err := c.InitConnect(conn); err != nil {
			t.Fatalf("ADS connect to %s: %v", xdsAddr, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.follow(ctx, c, typeURL)
		}()
	}
	return e
}

func (e *envoy) follow(ctx context.Context, c sotw.ADSClient, typeURL string) {
	for ctx.Err() == nil {
		resp, err := c.Fetch()
		if err != nil {
			return
		}
		got, bad := decodeResponse(resp)
		if bad != nil {
			bad = fmt.Errorf("%s: %w", typeURL, bad)
			_ = c.Nack(bad.Error())
			e.mu.Lock()
			e.errs = append(e.errs, bad)
			e.mu.Unlock()
			continue
		}
		e.mu.Lock()
		e.state[typeURL] = got
		e.mu.Unlock()
		select {
		case e.changed <- struct{}{}:
		default:
		}
		_ = c.Ack()
	}
}

// decodeResponse decodes the resources of an xDS response by name, as an
// Envoy would accept them: each must pass ValidateAll.
func decodeResponse(resp *sotw.Response) (map[string]proto.Message, error) {
	got := map[string]proto.Message{}
	for _, a := range resp.Resources {
		m, err := a.UnmarshalNew()
		if err == nil {
			err = m.(validator).ValidateAll()
		}
		if err != nil {
			return nil, err
		}
		got[cache.GetResourceName(m)] = m
	}
	return got, nil
}

// snapshot is a copy of what the envoy holds.
type snapshot struct {
	listeners map[string]*listener.Listener
	routes    map[string]*route.RouteConfiguration
	clusters  map[string]*cluster.Cluster
	endpoints map[string]*endpoint.ClusterLoadAssignment
}

func (e *envoy) snapshot() snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := snapshot{map[string]*listener.Listener{}, map[string]*route.RouteConfiguration{}, map[string]*cluster.Cluster{}, map[string]*endpoint.ClusterLoadAssignment{}}
	for n, m := range e.state[resource.ListenerType] {
		s.listeners[n] = m.(*listener.Listener)
	}
	for n, m := range e.state[resource.RouteType] {
		s.routes[n] = m.(*route.RouteConfiguration)
	}
	for n, m := range e.state[resource.ClusterType] {
		s.clusters[n] = m.(*cluster.Cluster)
	}
	for n, m := range e.state[resource.EndpointType] {
		s.endpoints[n] = m.(*endpoint.ClusterLoadAssignment)
	}
	return s
}

// waitFor waits until cond holds for what the envoy holds, and returns when
// it first did.
func (e *envoy) waitFor(t testing.TB, timeout time.Duration, what string, cond func(snapshot) bool) time.Time {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if cond(e.snapshot()) {
			return time.Now()
		}
		select {
		case <-e.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			e.mu.Lock()
			errs := e.errs
			e.mu.Unlock()
			t.Fatalf("envoy: %s not seen within %s (rejected: %v); holds %s", what, timeout, errs, e.snapshot())
		}
	}
}

func (s snapshot) String() string {
	out := "listeners:"
	for n := range s.listeners {
		out += " " + n
	}
	out += "; routes:"
	for n, r := range s.routes {
		out += " " + n + fmt.Sprintf("(%d vhosts)", len(r.GetVirtualHosts()))
	}
	out += "; clusters:"
	for n := range s.clusters {
		out += " " + n
	}
	out += "; endpoints:"
	for n, a := range s.endpoints {
		c := 0
		for _, l := range a.GetEndpoints() {
			c += len(l.GetLbEndpoints())
		}
		out += fmt.Sprintf(" %s(%d)", n, c)
	}
	return out
}
