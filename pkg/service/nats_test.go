package service_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/natsauth"
	"github.com/gatewire/gatewire/pkg/service"
)

// TestNATSVariables checks that every NATS file variable is read at start
// and that a bad one is named.
func TestNATSVariables(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	user, err := natsauth.NewUser(natsauth.Provider)
	if err != nil {
		t.Fatal(err)
	}
	seed := write("provider.nk", string(user.Seed))
	ca := certstest.CA(t, "nats CA")
	client := certstest.Write(t, filepath.Join(dir, "client"), certstest.Issue(t, ca,
		certs.ServiceRequest(certs.ServiceID{TrustDomain: certstest.TrustDomain, Name: "provider"}, certs.ClientAuth, nil, 0)))
	junk := write("junk", "not a key\n")

	good := map[string]string{
		"GATEWIRE_NATS_NKEY_SEED": seed,
		"GATEWIRE_NATS_TLS_CA":    client.CA,
		"GATEWIRE_NATS_TLS_CERT":  client.Cert,
		"GATEWIRE_NATS_TLS_KEY":   client.Key,
	}
	for k, v := range good {
		t.Setenv(k, v)
	}
	base := service.Base{AdminAddress: "127.0.0.1:0"}
	if err := service.Load(&base); err != nil {
		t.Fatalf("good NATS files refused: %v", err)
	}

	bad := []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"GATEWIRE_NATS_NKEY_SEED": junk}, []string{"GATEWIRE_NATS_NKEY_SEED", junk}},
		{map[string]string{"GATEWIRE_NATS_NKEY_SEED": filepath.Join(dir, "missing")}, []string{"GATEWIRE_NATS_NKEY_SEED", "missing"}},
		{map[string]string{"GATEWIRE_NATS_CREDS": junk, "GATEWIRE_NATS_NKEY_SEED": ""}, []string{"GATEWIRE_NATS_CREDS"}},
		{map[string]string{"GATEWIRE_NATS_CREDS": seed}, []string{"GATEWIRE_NATS_CREDS and GATEWIRE_NATS_NKEY_SEED"}},
		{map[string]string{"GATEWIRE_NATS_TLS_CA": junk}, []string{"GATEWIRE_NATS_TLS_CA"}},
		{map[string]string{"GATEWIRE_NATS_TLS_KEY": ""}, []string{"GATEWIRE_NATS_TLS_CERT and GATEWIRE_NATS_TLS_KEY"}},
		{map[string]string{"GATEWIRE_NATS_TLS_KEY": junk}, []string{"GATEWIRE_NATS_TLS_CERT", "GATEWIRE_NATS_TLS_KEY"}},
	}
	for _, c := range bad {
		for k, v := range good {
			t.Setenv(k, v)
		}
		t.Setenv("GATEWIRE_NATS_CREDS", "")
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		base := service.Base{AdminAddress: "127.0.0.1:0"}
		err := service.Load(&base)
		if err == nil {
			t.Errorf("%v: accepted", c.env)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not name %s", c.env, err, w)
			}
		}
	}
}
