package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/natsauth"
)

// natsConfigUsage describes what nats-config writes.
const natsConfigUsage = `Usage: gatewire nats-config -out DIR [flags]

Writes the NATS users of an installation into DIR, one per role, each
allowed the subjects of its role only:

  DIR/<role>.nk       the nkey seed of each role (provider, translator, xds,
                      infra, reader), mode 0600: give each service its own
                      (GATEWIRE_NATS_NKEY_SEED), gatewire tap and status the
                      reader's (-nats-nkey-seed)
  DIR/auth.conf       the accounts block for nats.conf (public keys only):
                      include "auth.conf"

With -tls it also writes a CA and the certificates of TLS for clients and
routes:

  DIR/ca/             the CA (tls.crt, tls.key, ca.crt)
  DIR/server/         the NATS servers' certificate, for clients and routes
                      (-names), and the ca.crt clients verify it with
                      (GATEWIRE_NATS_TLS_CA)
  DIR/clients/<role>/ a client certificate per role, for servers that
                      verify clients (GATEWIRE_NATS_TLS_CERT, _KEY)
  DIR/nats.conf       a server configuration that uses them

Running it again keeps the seeds and the CA, and renews certificates that
are due. On Kubernetes, gatewire certgen writes the same as Secrets.

Flags:`

func runNATSConfig(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nats-config", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), natsConfigUsage)
		fs.PrintDefaults()
	}
	out := fs.String("out", "", "folder to write into (required)")
	system := fs.String("system", envOr("GATEWIRE_SYSTEM", "gatewire"), "installation name (GATEWIRE_SYSTEM)")
	withTLS := fs.Bool("tls", false, "also write a CA, the servers' certificate and the clients'")
	names := fs.String("names", "localhost", "with -tls: DNS names of the NATS servers, comma-separated (the client URL's host and the route hosts)")
	lifetime := fs.Duration("lifetime", 365*24*time.Hour, "with -tls: lifetime of the certificates (nats-server reads its certificate at start and on reload)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return usageError("want -out DIR and no arguments")
	}
	if err := natsauth.CheckSystem(*system); err != nil {
		return usageError("-system: %v", err)
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return err
	}
	users, created, err := natsauth.EnsureUsers(func(r natsauth.Role) ([]byte, error) { return readSeed(filepath.Join(*out, string(r)+".nk")) })
	if err != nil {
		return err
	}
	for _, u := range users {
		if err := writeNew(filepath.Join(*out, string(u.Role)+".nk"), u.Seed, 0o600); err != nil {
			return err
		}
	}
	auth, err := natsauth.AuthConfig(*system, users)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "auth.conf"), []byte(auth), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "users of installation %q in %s (new: %s)\n", *system, *out, strings.Join(roleNames(created), ", "))
	if !*withTLS {
		return nil
	}
	return natsConfigTLS(ctx, *out, splitList(*names), *lifetime, stdout)
}

// natsConfigTLS writes the CA, the server's and the clients' certificates,
// and nats.conf.
func natsConfigTLS(ctx context.Context, out string, names []string, lifetime time.Duration, stdout io.Writer) error {
	now := time.Now()
	ca, _, err := certs.EnsureCA(ctx, certs.FileStore{Files: certs.DirFiles(filepath.Join(out, "ca"))}, "gatewire NATS CA", 0, now)
	if err != nil {
		return err
	}
	td := certs.DefaultTrustDomain
	server := certs.ServiceRequest(certs.ServiceID{TrustDomain: td, Name: "nats"}, certs.ServerAuth|certs.ClientAuth, names, lifetime)
	if _, err := certs.Ensure(ctx, certs.FileStore{Files: certs.DirFiles(filepath.Join(out, "server"))}, ca, server, now); err != nil {
		return err
	}
	for _, r := range natsauth.Roles {
		req := certs.ServiceRequest(certs.ServiceID{TrustDomain: td, Name: string(r)}, certs.ClientAuth, nil, lifetime)
		if _, err := certs.Ensure(ctx, certs.FileStore{Files: certs.DirFiles(filepath.Join(out, "clients", string(r)))}, ca, req, now); err != nil {
			return err
		}
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	serverFiles := certs.DirFiles(filepath.Join(abs, "server"))
	conf := fmt.Sprintf(`# A NATS server for gatewire: TLS with client certificates, and the users of auth.conf.
listen: 0.0.0.0:4222
jetstream { store_dir: %q }
tls {
  cert_file: %q
  key_file: %q
  ca_file: %q
  verify: true
  timeout: 5
}
include "auth.conf"
`, filepath.Join(abs, "jetstream"), serverFiles.Cert, serverFiles.Key, serverFiles.CA)
	if err := os.WriteFile(filepath.Join(out, "nats.conf"), []byte(conf), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "TLS: CA in %s, server certificate for %s, a client certificate per role; nats-server -c %s\n",
		filepath.Join(out, "ca"), strings.Join(names, ", "), filepath.Join(out, "nats.conf"))
	return nil
}

// readSeed reads a seed file; nil without error when there is none.
func readSeed(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// writeNew writes data to path unless path holds it already.
func writeNew(path string, data []byte, mode os.FileMode) error {
	if have, err := os.ReadFile(path); err == nil && string(have) == string(data) {
		return nil
	}
	return os.WriteFile(path, data, mode)
}

func roleNames(roles []natsauth.Role) []string {
	if len(roles) == 0 {
		return []string{"none"}
	}
	var out []string
	for _, r := range roles {
		out = append(out, string(r))
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
