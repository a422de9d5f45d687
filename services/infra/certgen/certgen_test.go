package certgen_test

import (
	"context"
	"crypto/x509"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/kubetest"
	"github.com/gatewire/gatewire/pkg/natsauth"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/infra/certgen"
)

var kube *kubetest.Env

func TestMain(m *testing.M) { goleak.VerifyTestMain(kubetest.Wrap(m, &kube), testkit.IgnoreKlog()) }

func secret(t *testing.T, c client.Client, ns, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatalf("Secret %s: %v", name, err)
	}
	return &s
}

func bundle(s *corev1.Secret) *certs.Bundle {
	return &certs.Bundle{Cert: s.Data["tls.crt"], Key: s.Data["tls.key"], CA: s.Data["ca.crt"]}
}

// TestCertgen runs certgen twice on a real API server: the first run makes
// every Secret, the second keeps the CA and the users.
func TestCertgen(t *testing.T) {
	c, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := kube.Namespace(t, "certgen")
	log := slog.New(slog.DiscardHandler)
	if err := certgen.Run(ctx, c, certgen.Options{Namespace: ns}, log); err != nil {
		t.Fatal(err)
	}
	ca, err := certs.ParseCA(bundle(secret(t, c, ns, certgen.CASecret)))
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := bundle(secret(t, c, ns, certgen.XDSTLSSecret)).Pool()
	for name, hosts := range map[string][]string{
		certgen.XDSTLSSecret:  {"gatewire-xds." + ns + ".svc", "localhost"},
		certgen.NATSTLSSecret: {"nats", "nats." + ns + ".svc", "nats-1.nats-headless", "nats-2.nats-headless." + ns + ".svc.cluster.local", "localhost"},
	} {
		leaf, err := bundle(secret(t, c, ns, name)).Leaf()
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hosts {
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: h, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Errorf("%s for %s: %v", name, h, err)
			}
		}
	}
	seeds := map[natsauth.Role]string{}
	auth := string(secret(t, c, ns, certgen.NATSAuthSecret).Data[certgen.AuthKey])
	for _, r := range natsauth.Roles {
		seed := secret(t, c, ns, certgen.NATSUserPrefix+string(r)).Data[certgen.SeedKey]
		u, err := natsauth.UserFromSeed(r, seed)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if !strings.Contains(auth, u.Public) {
			t.Errorf("auth.conf does not hold the public key of %s", r)
		}
		if strings.Contains(auth, strings.TrimSpace(string(seed))) {
			t.Errorf("auth.conf holds the seed of %s", r)
		}
		seeds[r] = string(seed)
	}

	if err := certgen.Run(ctx, c, certgen.Options{Namespace: ns}, log); err != nil {
		t.Fatal(err)
	}
	again, _ := certs.ParseCA(bundle(secret(t, c, ns, certgen.CASecret)))
	if !again.Certificate().Equal(ca.Certificate()) {
		t.Error("a second run replaced the CA")
	}
	for r, seed := range seeds {
		if got := string(secret(t, c, ns, certgen.NATSUserPrefix+string(r)).Data[certgen.SeedKey]); got != seed {
			t.Errorf("a second run replaced the seed of %s", r)
		}
	}
}

// TestCertgenKeepsABroughtCA: a CA in gatewire-ca (written by cert-manager)
// signs what certgen issues.
func TestCertgenKeepsABroughtCA(t *testing.T) {
	c, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := kube.Namespace(t, "byo")
	own, err := certs.NewCA("company CA", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certgen.CASecret},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": own.Bundle().Cert, "tls.key": own.Bundle().Key, "ca.crt": own.TrustBundle()},
	}); err != nil {
		t.Fatal(err)
	}
	if err := certgen.Run(ctx, c, certgen.Options{Namespace: ns}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if err := own.Verify(bundle(secret(t, c, ns, certgen.XDSTLSSecret)), certs.XDSServerRequest(certs.DefaultTrustDomain, []string{
		"gatewire-xds", "gatewire-xds." + ns, "gatewire-xds." + ns + ".svc", "gatewire-xds." + ns + ".svc.cluster.local"}, 0), time.Now()); err != nil {
		t.Errorf("the xds certificate is not the brought CA's: %v", err)
	}
}
