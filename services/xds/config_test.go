package xds

import (
	"os"
	"strings"
	"testing"

	"github.com/kelseyhightower/envconfig"
)

func TestConfigDefaults(t *testing.T) {
	var c Config
	if err := envconfig.Process("GATEWIRE", &c); err != nil {
		t.Fatal(err)
	}
	if c != DefaultConfig() {
		t.Errorf("defaults from the environment %+v differ from DefaultConfig() %+v", c, DefaultConfig())
	}
	// mTLS is on by default, and its files have no default.
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "GATEWIRE_XDS_TLS_CERT: required") {
		t.Errorf("defaults: Validate() = %v, want GATEWIRE_XDS_TLS_CERT required", err)
	}
	c.Insecure = true
	if err := c.Validate(); err != nil {
		t.Errorf("defaults with GATEWIRE_XDS_INSECURE=true do not validate: %v", err)
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
			t.Setenv("GATEWIRE_XDS_INSECURE", "true")
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
		c.Insecure = true
		c.Address = addr
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestConfigReplicaID(t *testing.T) {
	c := DefaultConfig()
	c.Insecure = true
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
