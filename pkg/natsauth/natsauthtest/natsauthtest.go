// Package natsauthtest starts a real nats-server in the test process with
// gatewire's authorization (package natsauth): a user per role with its
// permissions, and optionally TLS with client certificates, and connects
// to it as a role the way the services do (service.NATSOptions).
package natsauthtest

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/natsauth"
	"github.com/gatewire/gatewire/pkg/service"
)

// Options say how to configure the server.
type Options struct {
	// System is the installation name (default "gatewire").
	System string
	// TLS serves TLS only, with a server certificate of CA; VerifyClients
	// also requires a client certificate of CA.
	TLS, VerifyClients bool
}

// Server is a running nats-server with gatewire's users.
type Server struct {
	*server.Server
	System string
	// Dir holds nats.conf, auth.conf and a seed file per role.
	Dir string
	// CA signed the server's certificate (TLS only).
	CA *certs.CA
}

// Start starts a JetStream server on a random loopback port, configured by
// the nats.conf a deployment would use (auth.conf from natsauth.AuthConfig),
// and stops it when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.System == "" {
		o.System = "gatewire"
	}
	s := &Server{System: o.System, Dir: t.TempDir()}
	users, err := natsauth.NewUsers()
	if err != nil {
		t.Fatal(err)
	}
	auth, err := natsauth.AuthConfig(o.System, users)
	if err != nil {
		t.Fatal(err)
	}
	s.write(t, "auth.conf", []byte(auth), 0o644)
	for _, u := range users {
		s.write(t, string(u.Role)+".nk", u.Seed, 0o600)
	}
	conf := fmt.Sprintf("listen: 127.0.0.1:-1\njetstream { store_dir: %q }\ninclude \"auth.conf\"\n", filepath.Join(s.Dir, "js"))
	if o.TLS {
		s.CA = certstest.CA(t, "nats test CA")
		files := certstest.Write(t, filepath.Join(s.Dir, "tls"), certstest.Issue(t, s.CA,
			certs.ServiceRequest(certs.ServiceID{TrustDomain: certstest.TrustDomain, Name: "nats"}, certs.ServerAuth|certs.ClientAuth, []string{"localhost"}, 0)))
		conf += fmt.Sprintf("tls {\n  cert_file: %q\n  key_file: %q\n  ca_file: %q\n  verify: %t\n  timeout: 5\n}\n", files.Cert, files.Key, files.CA, o.VerifyClients)
	}
	s.write(t, "nats.conf", []byte(conf), 0o644)
	opts, err := server.ProcessConfigFile(filepath.Join(s.Dir, "nats.conf"))
	if err != nil {
		t.Fatalf("natsauthtest: nats.conf: %v", err)
	}
	opts.NoSigs, opts.NoLog = true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("natsauthtest: nats-server: %v", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		t.Fatal("natsauthtest: nats-server did not start within 10s")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	s.Server = ns
	return s
}

func (s *Server) write(t testing.TB, name string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.Dir, name), data, mode); err != nil {
		t.Fatal(err)
	}
}

// Seed is the seed file of role.
func (s *Server) Seed(role natsauth.Role) string { return filepath.Join(s.Dir, string(role)+".nk") }

// URL is the server's client URL, tls:// when it serves TLS.
func (s *Server) URL() string {
	if s.CA != nil {
		_, port, _ := net.SplitHostPort(s.Addr().String())
		return "tls://localhost:" + port // the name in the server's certificate
	}
	return "nats://" + s.Addr().String()
}

// Base is the service configuration of role on this server: its seed, and
// with TLS the CA bundle and a client certificate of the server's CA.
func (s *Server) Base(t testing.TB, role natsauth.Role) service.Base {
	t.Helper()
	b := service.Base{NATSURL: s.URL(), NATSReplicas: 1, System: s.System, NATSNkeySeed: s.Seed(role)}
	if s.CA != nil {
		files := certstest.Write(t, filepath.Join(t.TempDir(), string(role)), certstest.Issue(t, s.CA,
			certs.ServiceRequest(certs.ServiceID{TrustDomain: certstest.TrustDomain, Name: string(role)}, certs.ClientAuth, nil, 0)))
		b.NATSTLSCA, b.NATSTLSCert, b.NATSTLSKey = files.CA, files.Cert, files.Key
	}
	return b
}

// Errors collects the asynchronous errors of a connection: what the server
// answers to a publish or subscription it refuses.
type Errors struct {
	mu   sync.Mutex
	list []string
}

// Write receives the connection's log lines.
func (e *Errors) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, string(p))
	return len(p), nil
}

// Find returns the first error that holds all of words, or "".
func (e *Errors) Find(words ...string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
next:
	for _, l := range e.list {
		for _, w := range words {
			if !strings.Contains(l, w) {
				continue next
			}
		}
		return l
	}
	return ""
}

// Connect connects as role with base's files, through service.NATSOptions,
// and closes the connection when the test ends. The connection's log
// lines (its refused permissions among them) go to the returned Errors.
func Connect(t testing.TB, base service.Base, role natsauth.Role) (*nats.Conn, *Errors, error) {
	t.Helper()
	errs := &Errors{}
	log := slog.New(slog.NewTextHandler(errs, nil))
	opts, err := service.NATSOptions(base, string(role), log)
	if err != nil {
		return nil, errs, err
	}
	nc, err := nats.Connect(base.NATSURL, append(opts, nats.Name("natsauthtest-"+string(role)), nats.MaxReconnects(0))...)
	if err != nil {
		return nil, errs, err
	}
	t.Cleanup(nc.Close)
	return nc, errs, nil
}
