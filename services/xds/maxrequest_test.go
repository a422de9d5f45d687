package xds

import (
	"context"
	"strings"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
)

// TestMaxRequestBytes: a request past GATEWIRE_XDS_MAX_REQUEST_BYTES ends
// its stream with ResourceExhausted, and the server goes on serving.
func TestMaxRequestBytes(t *testing.T) {
	h := startWith(t, bustest.New(t), "xds-0", func(c *Config) { c.MaxRequestBytes = 4096 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(h.conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := &discovery.DiscoveryRequest{Node: node("shop/edge"), TypeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
		ResourceNames: []string{strings.Repeat("x", 8192)}}
	if err := stream.Send(req); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a request of 8 KiB past a limit of 4 KiB: %v, want ResourceExhausted", err)
	}
	if !h.svc.Ready() {
		t.Fatal("the service stopped after an oversized request")
	}
}
