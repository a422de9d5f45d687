package certs_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/service"
)

func TestXDSTransportFromTheEnvironment(t *testing.T) {
	for _, v := range []string{"GATEWIRE_XDS_INSECURE", "GATEWIRE_TRUST_DOMAIN"} {
		t.Setenv(v, "") // restored when the test ends
		if err := os.Unsetenv(v); err != nil {
			t.Fatal(err)
		}
	}
	var x certs.XDSTransport
	if err := service.Load(&x); err != nil || x.XDSInsecure || x.Domain() != certs.DefaultTrustDomain {
		t.Fatalf("defaults: %+v, %v", x, err)
	}
	t.Setenv("GATEWIRE_XDS_INSECURE", "true")
	t.Setenv("GATEWIRE_TRUST_DOMAIN", "example.org")
	if err := service.Load(&x); err != nil || !x.XDSInsecure || x.Domain() != "example.org" {
		t.Fatalf("from the environment: %+v, %v", x, err)
	}
	t.Setenv("GATEWIRE_TRUST_DOMAIN", "Example.org")
	if err := service.Load(&x); err == nil || !strings.HasPrefix(err.Error(), `GATEWIRE_TRUST_DOMAIN: `) {
		t.Errorf("a bad trust domain: %v", err)
	}
}
