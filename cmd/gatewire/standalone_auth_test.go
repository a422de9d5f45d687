package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/natsauth"
)

// TestStandaloneAuth: the users are made on first start, kept after, and
// the server's configuration holds them.
func TestStandaloneAuth(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	seeds, conf, err := standaloneAuth(dir, t.TempDir(), "gatewire")
	if err != nil {
		t.Fatal(err)
	}
	first := map[natsauth.Role]string{}
	for _, r := range natsauth.Roles {
		fi, err := os.Stat(seeds[r])
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("seed of %s: %v, mode %v, want 0600", r, err, fi.Mode())
		}
		data, _ := os.ReadFile(seeds[r])
		first[r] = string(data)
	}
	if _, _, err := standaloneAuth(dir, t.TempDir(), "gatewire"); err != nil {
		t.Fatal(err)
	}
	for _, r := range natsauth.Roles {
		if data, _ := os.ReadFile(seeds[r]); string(data) != first[r] {
			t.Errorf("a second start replaced the seed of %s", r)
		}
	}
	opts, err := embeddedOptions(conf, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Nkeys) != len(natsauth.Roles) || !opts.JetStream {
		t.Errorf("embedded server: %d users, JetStream %t", len(opts.Nkeys), opts.JetStream)
	}
	for _, listen := range []string{"0.0.0.0:4222", "[::]:4222", "192.0.2.1:4222", "nats.example.com:4222"} {
		if _, err := embeddedOptions(conf, listen); err == nil || !strings.Contains(err.Error(), "GATEWIRE_STANDALONE_NATS_LISTEN") {
			t.Errorf("listen %s: %v, want a refusal naming GATEWIRE_STANDALONE_NATS_LISTEN", listen, err)
		}
	}
	if err := os.WriteFile(seeds[natsauth.XDS], []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := standaloneAuth(dir, t.TempDir(), "gatewire"); err == nil || !strings.Contains(err.Error(), "xds.nk") {
		t.Errorf("a broken seed: %v, want an error naming the file", err)
	}
}

// TestBusFlags: the CLI finds standalone's reader on loopback only, and a
// bad file is named by its flag.
func TestBusFlags(t *testing.T) {
	auth := t.TempDir()
	t.Setenv("GATEWIRE_STANDALONE_AUTH_DIR", auth)
	u, err := natsauth.NewUser(natsauth.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(auth, "reader.nk"), u.Seed, 0o600); err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) busConn {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		c := busFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return c
	}
	b, err := parse().base()
	if err != nil || b.NATSNkeySeed != filepath.Join(auth, "reader.nk") {
		t.Errorf("on loopback: seed %q, %v; want standalone's reader", b.NATSNkeySeed, err)
	}
	b, err = parse("-nats-url", "tls://nats.example.com:4222").base()
	if err != nil || b.NATSNkeySeed != "" {
		t.Errorf("a remote server: seed %q, %v; want none", b.NATSNkeySeed, err)
	}
	_, err = parse("-nats-tls-ca", filepath.Join(auth, "reader.nk")).base()
	if err == nil || !strings.Contains(err.Error(), "-nats-tls-ca") {
		t.Errorf("a bad CA file: %v, want an error naming -nats-tls-ca", err)
	}
}
