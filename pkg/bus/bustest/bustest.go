// Package bustest starts a real JetStream nats-server in the test process
// and opens gatewire's buckets on it.
package bustest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
)

// Server starts an embedded JetStream nats-server on a random loopback port,
// storing in a temporary folder, and shuts it down when the test ends.
func Server(t testing.TB) *server.Server {
	t.Helper()
	return serve(t, options(t))
}

// options are those of a server on a random loopback port with file storage
// in a temporary folder.
func options(t testing.TB) server.Options {
	return server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}
}

// serve starts a server with opts, waits until it accepts connections and
// shuts it down when the test ends.
func serve(t testing.TB, opts server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(&opts)
	if err != nil {
		t.Fatalf("bustest: nats-server: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("bustest: nats-server did not start within 10s")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

// Connect opens a connection to s that is closed when the test ends.
func Connect(t testing.TB, s *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatalf("bustest: connect %s: %v", s.ClientURL(), err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Start starts a server and returns a connection to it.
func Start(t testing.TB) *nats.Conn {
	t.Helper()
	return Connect(t, Server(t))
}

var systems atomic.Int64

// New starts a server and opens the buckets under a system name unique to
// the test.
func New(t testing.TB, opts ...bus.Option) *bus.Bus {
	t.Helper()
	return Open(t, Start(t), opts...)
}

// Open opens the buckets over nc under a system name unique to the test.
func Open(t testing.TB, nc *nats.Conn, opts ...bus.Option) *bus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	system := fmt.Sprintf("test%d", systems.Add(1))
	b, err := bus.New(ctx, nc, append([]bus.Option{bus.WithSystem(system)}, opts...)...)
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	return b
}

// ServerWith starts a server like [Server] after change has altered its
// options, for example to give JetStream a tiny store.
func ServerWith(t testing.TB, change func(*server.Options)) *server.Server {
	t.Helper()
	opts := options(t)
	change(&opts)
	return serve(t, opts)
}
