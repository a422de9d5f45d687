package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestServicesWithAuthorization runs the four services as processes on a
// nats-server configured by `gatewire nats-config -tls`: TLS with client
// certificates, and a user per service whose permissions allow only the
// subjects of its role. The services must do their whole job (a route
// reaches an ADS client) without the server refusing any of them anything,
// and gatewire status must read the bus as the read-only user.
func TestServicesWithAuthorization(t *testing.T) {
	tmp := t.TempDir()
	auth, resources, bootstraps := filepath.Join(tmp, "auth"), filepath.Join(tmp, "resources"), filepath.Join(tmp, "bootstrap")
	if err := os.MkdirAll(resources, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runGatewire([]string{"GATEWIRE_SYSTEM=it"}, "nats-config", "-out", auth, "-tls", "-names", "localhost"); err != nil {
		t.Fatalf("gatewire nats-config: %v\n%s", err, out)
	}
	natsAddr := freeAddr(t)
	host, port, _ := strings.Cut(natsAddr, ":")
	nats := start(t, "nats-server", nil, "-c", filepath.Join(auth, "nats.conf"), "-a", host, "-p", port)
	waitListening(t, nats, natsAddr, 20*time.Second)

	xdsAddr := freeAddr(t)
	pki := newXDSPKI(t, tmp)
	url := "tls://localhost:" + port // the name in the server's certificate
	env := map[string][]string{
		"provider":   {"GATEWIRE_PROVIDER_DIR=" + resources},
		"translator": nil,
		"xds":        append(pki.xdsEnv(), "GATEWIRE_XDS_ADDRESS="+xdsAddr),
		"infra":      append(pki.infraEnv(), "GATEWIRE_INFRA_BOOTSTRAP_DIR="+bootstraps, "GATEWIRE_INFRA_XDS_ADDRESS="+xdsAddr),
	}
	procs := map[string]*proc{}
	admins := map[string]string{}
	for _, name := range []string{"provider", "translator", "xds", "infra"} {
		client := filepath.Join(auth, "clients", name)
		admins[name] = freeAddr(t)
		procs[name] = start(t, name, append([]string{
			"GATEWIRE_ADMIN_ADDRESS=" + admins[name], "GATEWIRE_NATS_URL=" + url, "GATEWIRE_SYSTEM=it",
			"GATEWIRE_NATS_NKEY_SEED=" + filepath.Join(auth, name+".nk"),
			"GATEWIRE_NATS_TLS_CA=" + filepath.Join(client, "ca.crt"),
			"GATEWIRE_NATS_TLS_CERT=" + filepath.Join(client, "tls.crt"),
			"GATEWIRE_NATS_TLS_KEY=" + filepath.Join(client, "tls.key"),
		}, env[name]...))
	}
	// Each service creates the buckets it owns and waits for the others':
	// none is ready before all have started.
	for name, p := range procs {
		waitReady(t, p, admins[name], 60*time.Second)
	}

	envoy := connectEnvoyWith(t, xdsAddr, "shop/edge", pki.creds(t, "shop/edge"))
	write(t, filepath.Join(resources, "gateway.yaml"), gatewayYAML)
	write(t, filepath.Join(resources, "backend.yaml"), backendYAML)
	write(t, filepath.Join(resources, "route.yaml"), routeYAML("/cart"))
	envoy.waitFor(t, 30*time.Second, "the route of shop/edge", func(s snapshot) bool {
		c := routeTo(s, "shop.example.com", "/cart")
		return c != "" && endpointCount(s, c) == 3
	})
	reader := filepath.Join(auth, "clients", "reader")
	testkit.EventuallyValue(t, 20*time.Second, "gatewire status as the reader: shop/edge Programmed", func() (string, bool) {
		out, err := runGatewire(nil, "status", "-nats-url", url, "-system", "it",
			"-nats-nkey-seed", filepath.Join(auth, "reader.nk"), "-nats-tls-ca", filepath.Join(reader, "ca.crt"),
			"-nats-tls-cert", filepath.Join(reader, "tls.crt"), "-nats-tls-key", filepath.Join(reader, "tls.key"))
		return fmt.Sprintf("%v\n%s", err, out), err == nil && strings.Contains(out, "gateway shop/edge") && strings.Contains(out, "Programmed     True")
	})
	for name, p := range procs {
		out := p.output()
		for _, bad := range []string{"Permissions Violation", "asks for no credentials"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s logged %q:\n%s", name, bad, out)
			}
		}
	}
}
