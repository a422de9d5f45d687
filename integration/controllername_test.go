package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/credentials/insecure"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestStandaloneControllerName runs gatewire standalone with a controller
// name of its own (GATEWIRE_CONTROLLER_NAME) over a GatewayClass that
// names it and one that names the default name: the Gateway of the first
// is served (its Envoy gets its listener and route, it is Accepted and
// Programmed, it has a bootstrap), the Gateway of the default class is
// another controller's and gets nothing.
func TestStandaloneControllerName(t *testing.T) {
	const controller = "example.com/gateway-controller"
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "manifests")
	write(t, filepath.Join(dir, "classes.yaml"), gatewaytest.ClassOf("custom", controller)+gatewaytest.GatewayClass())
	write(t, filepath.Join(dir, "gateways.yaml"), gatewaytest.GatewayOfClass("custom", "default", "served", "http", 8080)+
		gatewaytest.Gateway("default", "ignored"))
	route := gatewaytest.Route{Namespace: "default", Name: "www", Gateway: "served", Hostname: "www.example.com", Service: "app"}
	write(t, filepath.Join(dir, "app.yaml"), route.String()+gatewaytest.Service("default", "app")+
		gatewaytest.EndpointSlice("default", "app", "10.1.0.1", "10.1.0.2"))

	xdsAddr, natsAddr, admin := freeAddr(t), freeAddr(t), freeAddr(t)
	bootstraps, auth := filepath.Join(tmp, "bootstrap"), filepath.Join(tmp, "auth")
	p := start(t, "gatewire", []string{
		"GATEWIRE_CONTROLLER_NAME=" + controller,
		"GATEWIRE_XDS_ADDRESS=" + xdsAddr,
		"GATEWIRE_XDS_INSECURE=true",
		"GATEWIRE_INFRA_XDS_ADDRESS=" + xdsAddr,
		"GATEWIRE_STANDALONE_NATS_LISTEN=" + natsAddr,
		"GATEWIRE_STANDALONE_STORE_DIR=" + filepath.Join(tmp, "nats"),
		"GATEWIRE_STANDALONE_AUTH_DIR=" + auth,
		"GATEWIRE_INFRA_BOOTSTRAP_DIR=" + bootstraps,
		"GATEWIRE_ADMIN_ADDRESS=" + admin,
	}, "standalone", "-dir", dir)
	waitReady(t, p, admin, 30*time.Second)

	envoy := connectEnvoyWith(t, xdsAddr, "default/served", insecure.NewCredentials())
	envoy.waitFor(t, 20*time.Second, "the listener and route of default/served", func(s snapshot) bool {
		c := routeTo(s, "www.example.com", "/")
		return len(s.listeners) == 1 && c != "" && endpointCount(s, c) == 2
	})
	checkBootstrap(t, filepath.Join(bootstraps, "default-served.yaml"), "default/served", xdsAddr)

	env := []string{"GATEWIRE_STANDALONE_AUTH_DIR=" + auth}
	status := func(gateway string) (string, error) {
		return runGatewire(env, "status", "-nats-url", "nats://"+natsAddr, gateway)
	}
	accepted, programmed := regexp.MustCompile(`(?m)^\s+Accepted\s+True\b`), regexp.MustCompile(`(?m)^\s+Programmed\s+True\b`)
	testkit.EventuallyValue(t, 20*time.Second, "gatewire status default/served: Accepted and Programmed True", func() (string, bool) {
		out, err := status("default/served")
		return out, err == nil && accepted.MatchString(out) && programmed.MatchString(out)
	})
	// The translator published default/served after reading every
	// resource, so it had translated default/ignored by then.
	if out, err := status("default/ignored"); err == nil || !strings.Contains(out, "the bus holds nothing of it") {
		t.Errorf("gatewire status default/ignored, of the class naming the default controller name: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(bootstraps, "default-ignored.yaml")); !os.IsNotExist(err) {
		t.Errorf("default/ignored, of the class naming the default controller name, has a bootstrap: %v", err)
	}
}

// TestStandaloneRefusesTwoControllerNames sets the controller name and its
// deprecated alias to different names: standalone refuses to start and
// names both variables.
func TestStandaloneRefusesTwoControllerNames(t *testing.T) {
	tmp := t.TempDir()
	out, err := runGatewire([]string{
		"GATEWIRE_CONTROLLER_NAME=example.com/new",
		"GATEWIRE_PROVIDER_CONTROLLER_NAME=example.com/old",
		"GATEWIRE_STANDALONE_STORE_DIR=" + filepath.Join(tmp, "nats"),
		"GATEWIRE_STANDALONE_AUTH_DIR=" + filepath.Join(tmp, "auth"),
		"GATEWIRE_ADMIN_ADDRESS=" + freeAddr(t),
	}, "standalone", "-dir", tmp)
	want := `GATEWIRE_CONTROLLER_NAME="example.com/new" and GATEWIRE_PROVIDER_CONTROLLER_NAME="example.com/old" differ`
	if err == nil || strings.Count(out, want) != 1 {
		t.Errorf("standalone with two controller names: %v; want one error %q:\n%s", err, want, out)
	}
}
