package xds

import (
	"context"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
)

// adsStream is a raw state-of-the-world ADS stream for one type, driven by
// the test: it sends what the test says, and the responses it receives
// wait in a channel.
type adsStream struct {
	stream    discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	typeURL   string
	names     []string                          // the resource names it asks for; none for all
	responses chan *discovery.DiscoveryResponse // closed when the stream ends
	// last is the last response taken with recv; acked is the version of
	// the last response the test ACKed.
	last  *discovery.DiscoveryResponse
	acked string
}

// openADS opens a stream to conn as a node of nodeCluster and sends its
// first request for typeURL, and the resources names when there are any,
// with version: "" for a new client, the last version it applied for a
// client that reconnects. The stream ends with the test.
func openADS(t *testing.T, conn grpc.ClientConnInterface, nodeCluster, typeURL, version string, names ...string) *adsStream {
	t.Helper()
	return openADSAs(t, conn, node(nodeCluster), typeURL, version, names...)
}

// openADSAs is openADS for any node.
func openADSAs(t *testing.T, conn grpc.ClientConnInterface, n *core.Node, typeURL, version string, names ...string) *adsStream {
	t.Helper()
	return openADSWith(t, conn, &discovery.DiscoveryRequest{Node: n, TypeUrl: typeURL, VersionInfo: version, ResourceNames: names})
}

// openADSWith is openADS with any first request.
func openADSWith(t *testing.T, conn grpc.ClientConnInterface, first *discovery.DiscoveryRequest) *adsStream {
	t.Helper()
	typeURL, version, names := first.GetTypeUrl(), first.GetVersionInfo(), first.GetResourceNames()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		cancel()
		t.Fatalf("open ADS stream: %v", err)
	}
	s := &adsStream{
		stream: stream, typeURL: typeURL,
		responses: make(chan *discovery.DiscoveryResponse, 16), acked: version,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.responses)
		for {
			resp, err := stream.Recv()
			if err != nil {
				return
			}
			select {
			case s.responses <- resp:
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	s.names = names
	s.send(t, first)
	return s
}

func (s *adsStream) send(t *testing.T, req *discovery.DiscoveryRequest) {
	t.Helper()
	if err := s.stream.Send(req); err != nil {
		t.Fatalf("send %s request: %v", s.typeURL, err)
	}
}

// recv waits for the next response.
func (s *adsStream) recv(t *testing.T) *discovery.DiscoveryResponse {
	t.Helper()
	select {
	case resp, ok := <-s.responses:
		if !ok {
			t.Fatalf("%s stream ended", s.typeURL)
		}
		s.last = resp
		return resp
	case <-time.After(wait):
		t.Fatalf("no %s response in %s", s.typeURL, wait)
		return nil
	}
}

// expectNone checks that no response arrives within d.
func (s *adsStream) expectNone(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case resp, ok := <-s.responses:
		if ok {
			t.Fatalf("unexpected %s response at version %q with %d resources", s.typeURL, resp.GetVersionInfo(), len(resp.GetResources()))
		}
	case <-time.After(d):
	}
}

// ack accepts the last response.
func (s *adsStream) ack(t *testing.T) {
	t.Helper()
	s.acked = s.last.GetVersionInfo()
	s.send(t, &discovery.DiscoveryRequest{
		TypeUrl: s.typeURL, VersionInfo: s.acked, ResponseNonce: s.last.GetNonce(), ResourceNames: s.names,
	})
}

// nack rejects the last response as a data plane does: with the version it
// last applied and the reason.
func (s *adsStream) nack(t *testing.T, detail string) {
	t.Helper()
	s.send(t, &discovery.DiscoveryRequest{
		TypeUrl: s.typeURL, VersionInfo: s.acked, ResponseNonce: s.last.GetNonce(), ResourceNames: s.names,
		ErrorDetail: &rpcstatus.Status{Code: 3, Message: detail},
	})
}
