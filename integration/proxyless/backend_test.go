package proxyless

import (
	"context"
	"net"
	"strconv"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
)

// backendHeader is the response header in which every backend names
// itself.
const backendHeader = "x-backend"

// backend is a real gRPC server on a loopback port: the interop
// TestService and the health service, each answer carrying the backend's
// name in backendHeader.
type backend struct {
	name string
	port uint32
}

// startBackend serves until the test ends.
func startBackend(t *testing.T, name string) *backend {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("backend %s: listen: %v", name, err)
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if err := grpc.SetHeader(ctx, metadata.Pairs(backendHeader, name)); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}))
	testgrpc.RegisterTestServiceServer(s, echo{name: name})
	healthpb.RegisterHealthServer(s, health.NewServer())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(l)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	_, port, _ := net.SplitHostPort(l.Addr().String())
	p, _ := strconv.ParseUint(port, 10, 32)
	return &backend{name: name, port: uint32(p)}
}

// echo answers UnaryCall with its name as the hostname, and EmptyCall.
type echo struct {
	testgrpc.UnimplementedTestServiceServer
	name string
}

func (e echo) UnaryCall(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Hostname: e.name}, nil
}

func (echo) EmptyCall(context.Context, *testgrpc.Empty) (*testgrpc.Empty, error) {
	return &testgrpc.Empty{}, nil
}
