package certs_test

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
)

// gatewayHealth is a gRPC service that authorizes as the xds server must:
// a request names a gateway ("<namespace>/<name>" in the service field,
// where an xDS request has node.cluster), and only a peer whose verified
// certificate names that gateway is answered.
type gatewayHealth struct {
	healthpb.UnimplementedHealthServer
}

func (gatewayHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil, status.Error(codes.Unauthenticated, "no peer")
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 {
		return nil, status.Error(codes.Unauthenticated, "no verified client certificate")
	}
	ns, name, err := certs.GatewayOf(info.State.VerifiedChains[0][0])
	if err != nil {
		return nil, status.Error(codes.PermissionDenied, err.Error())
	}
	if req.GetService() != ns+"/"+name {
		return nil, status.Errorf(codes.PermissionDenied, "the client certificate names gateway %s/%s, not %q", ns, name, req.GetService())
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// TestGRPCAuthorization runs a gRPC server with ServerConfig and attacks it
// as the xds server will be attacked: plaintext, a certificate of another
// CA, and a gateway's certificate asking as another gateway.
func TestGRPCAuthorization(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	cfg, err := certs.ServerConfig(certstest.XDSServer(t, ca))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg)))
	healthpb.RegisterHealthServer(srv, gatewayHealth{})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	addr := ln.Addr().String()

	tlsClient := func(files certs.Files) credentials.TransportCredentials {
		c, err := certs.ClientConfig(files, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		return credentials.NewTLS(c)
	}
	edge := tlsClient(certstest.Gateway(t, ca, "shop", "edge"))
	foreign := tlsClient(withCA(t, certstest.Gateway(t, certstest.CA(t, "other CA"), "shop", "edge"), ca))
	anyServer := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}) // no certificate
	cases := []struct {
		name  string
		creds credentials.TransportCredentials
		ask   string
		want  codes.Code
	}{
		{"its own gateway", edge, "shop/edge", codes.OK},
		{"gateway shop/edge asking as shop/admin", edge, "shop/admin", codes.PermissionDenied},
		{"gateway shop/edge asking as other/edge", edge, "other/edge", codes.PermissionDenied},
		{"plaintext", insecure.NewCredentials(), "shop/edge", codes.Unavailable},
		{"a certificate from another CA", foreign, "shop/edge", codes.Unavailable},
		{"TLS without a client certificate", anyServer, "shop/edge", codes.Unavailable},
	}
	for _, c := range cases {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(c.creds))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: c.ask})
		cancel()
		conn.Close()
		if got := status.Code(err); got != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
			continue
		}
		if c.want != codes.OK && resp != nil {
			t.Errorf("%s: served %v", c.name, resp)
		}
		t.Logf("%s: %s: %v", c.name, status.Code(err), err)
	}
}
