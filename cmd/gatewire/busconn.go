package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/natsauth"
	"github.com/gatewire/gatewire/pkg/service"
)

// defaultAuthDir is where gatewire standalone keeps its NATS users; the
// commands that read the bus find its read-only user there.
const defaultAuthDir = ".gatewire/auth"

// busConn holds the flags that name an installation's bus and how to reach
// it: every command that reads the bus takes them.
type busConn struct {
	url, system            *string
	creds, seed            *string
	tlsCA, tlsCert, tlsKey *string
}

// busFlags defines the connection flags on fs, each defaulting to the
// variable the services read.
func busFlags(fs *flag.FlagSet) busConn {
	return busConn{
		url:     fs.String("nats-url", envOr("GATEWIRE_NATS_URL", "nats://127.0.0.1:4222"), "NATS server URL (GATEWIRE_NATS_URL)"),
		system:  fs.String("system", envOr("GATEWIRE_SYSTEM", "gatewire"), "installation name (GATEWIRE_SYSTEM)"),
		creds:   fs.String("nats-creds", os.Getenv("GATEWIRE_NATS_CREDS"), "NATS credentials file (GATEWIRE_NATS_CREDS)"),
		seed:    fs.String("nats-nkey-seed", os.Getenv("GATEWIRE_NATS_NKEY_SEED"), "file of a NATS user nkey seed, the read-only user's (GATEWIRE_NATS_NKEY_SEED); on loopback, standalone's "+defaultAuthDir+"/reader.nk when present"),
		tlsCA:   fs.String("nats-tls-ca", os.Getenv("GATEWIRE_NATS_TLS_CA"), "PEM CA bundle that verifies the NATS server; turns TLS on (GATEWIRE_NATS_TLS_CA)"),
		tlsCert: fs.String("nats-tls-cert", os.Getenv("GATEWIRE_NATS_TLS_CERT"), "PEM client certificate (GATEWIRE_NATS_TLS_CERT)"),
		tlsKey:  fs.String("nats-tls-key", os.Getenv("GATEWIRE_NATS_TLS_KEY"), "PEM key of -nats-tls-cert (GATEWIRE_NATS_TLS_KEY)"),
	}
}

// flagName is the flag of a NATS variable: NATS_TLS_CA is -nats-tls-ca.
func flagName(variable string) string {
	return "-" + strings.ToLower(strings.ReplaceAll(variable, "_", "-"))
}

// base is the flags as a service configuration, checked. Without
// credentials, a server on loopback is taken for gatewire standalone's,
// whose read-only user's seed is under the auth folder
// (GATEWIRE_STANDALONE_AUTH_DIR, default .gatewire/auth) when it is there.
func (c busConn) base() (service.Base, error) {
	b := service.Base{
		NATSURL: *c.url, System: *c.system, NATSCreds: *c.creds, NATSNkeySeed: *c.seed,
		NATSTLSCA: *c.tlsCA, NATSTLSCert: *c.tlsCert, NATSTLSKey: *c.tlsKey,
	}
	if b.NATSCreds == "" && b.NATSNkeySeed == "" && onLoopback(b.NATSURL) {
		seed := filepath.Join(envOr("GATEWIRE_STANDALONE_AUTH_DIR", defaultAuthDir), string(natsauth.Reader)+".nk")
		if _, err := os.Stat(seed); err == nil {
			b.NATSNkeySeed = seed
		}
	}
	if err := b.CheckNATS(flagName); err != nil {
		return b, usageError("%v", err)
	}
	return b, nil
}

// onLoopback reports whether every server of urls is on this host.
func onLoopback(urls string) bool {
	for _, u := range strings.Split(urls, ",") {
		parsed, err := url.Parse(strings.TrimSpace(u))
		if err != nil {
			return false
		}
		host := parsed.Hostname()
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return true
}

// open connects to the installation's NATS server as client name, the
// read-only role, and opens its buckets without changing them; disconnect
// closes the connection. Warnings (a server that asks for no credentials)
// go to standard error.
func (c busConn) open(ctx context.Context, name string, opts ...nats.Option) (b *bus.Bus, disconnect func(), err error) {
	base, err := c.base()
	if err != nil {
		return nil, nil, err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	auth, err := service.NATSOptions(base, string(natsauth.Reader), log)
	if err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(base.NATSURL, append(append(opts, nats.Name(name)), auth...)...)
	if errors.Is(err, nats.ErrAuthorization) {
		return nil, nil, fmt.Errorf("connect to %s: %w: give the read-only user with -nats-nkey-seed or -nats-creds (gatewire standalone's is %s/reader.nk)", base.NATSURL, err, defaultAuthDir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", base.NATSURL, err)
	}
	b, err = bus.New(ctx, nc, bus.WithSystem(base.System), bus.WithOpenOnly())
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("open the buckets of installation %q on %s (is gatewire running there?): %w", base.System, base.NATSURL, err)
	}
	return b, nc.Close, nil
}

func envOr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}
