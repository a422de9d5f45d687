package xds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kelseyhightower/envconfig"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
)

func TestConfigDefaults(t *testing.T) {
	var c Config
	if err := envconfig.Process("GATEWIRE", &c); err != nil {
		t.Fatal(err)
	}
	if c != DefaultConfig() {
		t.Errorf("defaults from the environment %+v differ from DefaultConfig() %+v", c, DefaultConfig())
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	// mTLS is on by default, and its files have no default: New wants them.
	if _, err := New(c, bustest.New(t), nil); err == nil || !strings.HasPrefix(err.Error(), "GATEWIRE_XDS_TLS_CERT: required") {
		t.Errorf("New with the defaults: %v, want GATEWIRE_XDS_TLS_CERT required", err)
	}
}

// TestConfigTLSFiles: a TLS file given without the others, or one that
// does not load, stops the service with its variable named.
func TestConfigTLSFiles(t *testing.T) {
	ca := certstest.CA(t, "config test CA")
	good := certstest.XDSServer(t, ca)
	bad := filepath.Join(t.TempDir(), "bad.pem")
	if err := os.WriteFile(bad, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		cert, key, ca, want string
	}{
		{good.Cert, "", "", "GATEWIRE_XDS_TLS_KEY: required"},
		{good.Cert, good.Key, "", "GATEWIRE_XDS_TLS_CA: required"},
		{"", good.Key, good.CA, "GATEWIRE_XDS_TLS_CERT: required"},
		{missing, good.Key, good.CA, "GATEWIRE_XDS_TLS_CERT: "},
		{good.Cert, missing, good.CA, "GATEWIRE_XDS_TLS_KEY: "},
		{good.Cert, good.Key, missing, "GATEWIRE_XDS_TLS_CA: "},
		{bad, good.Key, good.CA, "GATEWIRE_XDS_TLS_CERT, GATEWIRE_XDS_TLS_KEY, GATEWIRE_XDS_TLS_CA: "},
		{good.Cert, good.Key, bad, "GATEWIRE_XDS_TLS_CERT, GATEWIRE_XDS_TLS_KEY, GATEWIRE_XDS_TLS_CA: "},
	} {
		c := DefaultConfig()
		c.ReplicaID = "xds-0"
		c.CertFile, c.KeyFile, c.CAFile = tc.cert, tc.key, tc.ca
		_, err := New(c, bustest.New(t), nil)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("cert %q key %q ca %q: New: %v; want %q", tc.cert, tc.key, tc.ca, err, tc.want)
		}
	}
	c := DefaultConfig()
	c.ReplicaID = "xds-0"
	c.CertFile, c.KeyFile, c.CAFile = good.Cert, good.Key, good.CA
	if _, err := New(c, bustest.New(t), nil); err != nil {
		t.Errorf("New with good files: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct{ variable, value string }{
		{"GATEWIRE_XDS_ADDRESS", "18000"},
		{"GATEWIRE_XDS_ADDRESS", ":http"},
		{"GATEWIRE_XDS_ADDRESS", "127.0.0.1:70000"},
		{"GATEWIRE_XDS_KEEPALIVE_TIME", "0s"},
		{"GATEWIRE_XDS_KEEPALIVE_TIMEOUT", "-1s"},
		{"GATEWIRE_XDS_KEEPALIVE_MIN_TIME", "0s"},
		{"GATEWIRE_XDS_SHUTDOWN_TIMEOUT", "0s"},
		{"GATEWIRE_XDS_MAX_CONCURRENT_STREAMS", "0"},
		{"GATEWIRE_XDS_REPLICA_ID", "xds/0"},
		{"GATEWIRE_XDS_REPLICA_ID", "xds_0"},
		{"GATEWIRE_XDS_REPLICA_ID", "*"},
		{"GATEWIRE_TRUST_DOMAIN", "Not A Domain"},
	} {
		t.Run(tc.variable+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.variable, tc.value)
			var c Config
			if err := envconfig.Process("GATEWIRE", &c); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tc.variable+": ") {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.variable)
			}
			if _, err := New(c, nil, nil); err == nil {
				t.Fatal("New accepted the configuration")
			}
		})
	}
}

func TestConfigValidAddresses(t *testing.T) {
	for _, addr := range []string{":18000", "127.0.0.1:0", "[::1]:18000", "xds.example:18000"} {
		c := DefaultConfig()
		c.XDSInsecure = true
		c.Address = addr
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestConfigReplicaID(t *testing.T) {
	c := DefaultConfig()
	c.XDSInsecure = true
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.replica(); err != nil || got != host {
		t.Errorf("replica() = %q, %v; want the host name %q", got, err, host)
	}
	c.ReplicaID = "xds-0.gatewire-system"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.replica(); err != nil || got != c.ReplicaID {
		t.Errorf("replica() = %q, %v; want %q", got, err, c.ReplicaID)
	}
}
