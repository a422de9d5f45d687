package xds

import (
	"context"
	"slices"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// TestRemovedClustersAfterListeners has a proxyless client hold an API
// listener and two clusters on one ADS stream, removes the listener and
// one cluster, and checks that the listener's removal is sent before the
// cluster's, so that the client never routes to a cluster it was told is
// gone; then adds both back and checks that the clusters come first.
func TestRemovedClustersAfterListeners(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, proxylessSample(t, "v1", "a.example"))
	h.waitVersion(t, gateway, "v1")
	ads := openMultiADS(t, h, proxylessNode(t, gateway))
	ads.subscribe(t, resource.ListenerType, "a.example")
	ads.subscribe(t, resource.ClusterType, xdstest.ClusterName, "other")
	ads.recvAll(t, 2)

	h.put(t, gatewayKey, mustSnapshot(t, "v2",
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.RouteConfig(xdstest.RouteName, xdstest.ClusterName),
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", xdstest.BackendPort)))
	if got := ads.recvAll(t, 2); !slices.Equal(got, []string{resource.ListenerType, resource.ClusterType}) {
		t.Errorf("removal sent as %q, want the listeners before the clusters", got)
	}

	// Once the client answered both, as a make-before-break of clusters
	// behind an unanswered response is not what this test checks.
	h.waitAck(t, false, resource.ListenerType, "v2")
	h.waitAck(t, false, resource.ClusterType, "v2")
	h.put(t, gatewayKey, proxylessSample(t, "v3", "a.example"))
	if got := ads.recvAll(t, 2); !slices.Equal(got, []string{resource.ClusterType, resource.ListenerType}) {
		t.Errorf("addition sent as %q, want the clusters before the listeners", got)
	}
}

// TestRemovedClustersWaitForPendingListeners checks that clusters to
// remove are not sent while the new listeners wait for the client to
// answer the last listener response, and are sent once it answers.
func TestRemovedClustersWaitForPendingListeners(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, proxylessSample(t, "v1", "a.example"))
	h.waitVersion(t, gateway, "v1")
	ads := openMultiADS(t, h, proxylessNode(t, gateway))
	ads.subscribe(t, resource.ClusterType, xdstest.ClusterName, "other")
	ads.recvAll(t, 1)
	ads.subscribe(t, resource.ListenerType, "a.example")
	listeners := ads.recv(t) // not answered yet

	h.put(t, gatewayKey, mustSnapshot(t, "v3",
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.RouteConfig(xdstest.RouteName, xdstest.ClusterName),
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", xdstest.BackendPort)))
	h.waitVersion(t, gateway, "v3")
	ads.expectNone(t, quiet)
	ads.answer(t, listeners)
	if got := ads.recvAll(t, 2); !slices.Equal(got, []string{resource.ListenerType, resource.ClusterType}) {
		t.Errorf("after the listener ACK: %q, want the listeners, then the clusters", got)
	}
}

// multiADS is a raw state-of-the-world ADS stream of several types, to
// see the order of the responses.
type multiADS struct {
	stream    discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	node      *core.Node
	names     map[string][]string
	responses chan *discovery.DiscoveryResponse
}

func openMultiADS(t *testing.T, h *harness, n *core.Node) *multiADS {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(h.conn).StreamAggregatedResources(ctx)
	if err != nil {
		cancel()
		t.Fatalf("open ADS stream: %v", err)
	}
	m := &multiADS{stream: stream, node: n, names: map[string][]string{}, responses: make(chan *discovery.DiscoveryResponse, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(m.responses)
		for {
			resp, err := stream.Recv()
			if err != nil {
				return
			}
			m.responses <- resp
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return m
}

func (m *multiADS) send(t *testing.T, req *discovery.DiscoveryRequest) {
	t.Helper()
	req.Node = m.node
	if err := m.stream.Send(req); err != nil {
		t.Fatalf("send %s request: %v", req.GetTypeUrl(), err)
	}
}

// subscribe sends the first request of typeURL.
func (m *multiADS) subscribe(t *testing.T, typeURL string, names ...string) {
	t.Helper()
	m.names[typeURL] = names
	m.send(t, &discovery.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: names})
}

// answer ACKs resp.
func (m *multiADS) answer(t *testing.T, resp *discovery.DiscoveryResponse) {
	t.Helper()
	m.send(t, &discovery.DiscoveryRequest{TypeUrl: resp.GetTypeUrl(), VersionInfo: resp.GetVersionInfo(),
		ResponseNonce: resp.GetNonce(), ResourceNames: m.names[resp.GetTypeUrl()]})
}

func (m *multiADS) recv(t *testing.T) *discovery.DiscoveryResponse {
	t.Helper()
	select {
	case resp, ok := <-m.responses:
		if !ok {
			t.Fatal("ADS stream ended")
		}
		return resp
	case <-time.After(wait):
		t.Fatalf("no response in %s", wait)
		return nil
	}
}

// recvAll takes n responses, ACKs each, and returns their types in the
// order they came.
func (m *multiADS) recvAll(t *testing.T, n int) []string {
	t.Helper()
	var types []string
	for range n {
		resp := m.recv(t)
		types = append(types, resp.GetTypeUrl())
		m.answer(t, resp)
	}
	return types
}

func (m *multiADS) expectNone(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case resp := <-m.responses:
		t.Fatalf("unexpected %s response at %q", resp.GetTypeUrl(), resp.GetVersionInfo())
	case <-time.After(d):
	}
}
