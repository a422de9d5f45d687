package bustest

import (
	"net"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// Restartable is an embedded JetStream nats-server that a test can stop and
// start again on the same port and storage folder, as an operator restarts
// NATS: clients reconnect to the same URL and find the buckets as they were
// (file storage). Its methods are safe for concurrent use.
type Restartable struct {
	t    testing.TB
	opts server.Options
	mu   sync.Mutex
	s    *server.Server
}

// StartRestartable starts a server on a random loopback port, storing in a
// temporary folder, and shuts it down when the test ends.
func StartRestartable(t testing.TB) *Restartable {
	t.Helper()
	r := &Restartable{t: t, opts: options(t)}
	r.s = serve(t, r.opts)
	r.opts.Port = r.s.Addr().(*net.TCPAddr).Port
	return r
}

// URL is the client URL, the same across restarts.
func (r *Restartable) URL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s.ClientURL()
}

// Server is the running server (a new one after each Start).
func (r *Restartable) Server() *server.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s
}

// Stop shuts the server down and waits until it is gone.
func (r *Restartable) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.Shutdown()
	r.s.WaitForShutdown()
}

// Start starts the server again on the same port and storage folder and
// waits until it accepts connections.
func (r *Restartable) Start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s = serve(r.t, r.opts)
}
