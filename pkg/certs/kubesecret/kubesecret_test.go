package kubesecret_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/certs/kubesecret"
	"github.com/gatewire/gatewire/pkg/kubetest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestSecretStore keeps a CA and a certificate in Secrets of a real API
// server, and reads a CA that someone else (cert-manager) wrote.
var kube *kubetest.Env

func TestMain(m *testing.M) { goleak.VerifyTestMain(kubetest.Wrap(m, &kube), testkit.IgnoreKlog()) }

func TestSecretStore(t *testing.T) {
	c, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gatewire-system"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	store := func(name string) kubesecret.Store {
		return kubesecret.Store{Client: c, Namespace: "gatewire-system", Name: name, FieldOwner: "gatewire-test",
			Labels: map[string]string{"app.kubernetes.io/part-of": "gatewire"}}
	}
	if _, err := store("gatewire-ca").Load(ctx); !errors.Is(err, certs.ErrNotFound) {
		t.Fatalf("Load of a missing Secret = %v, want ErrNotFound", err)
	}
	now := time.Now()
	ca, created, err := certs.EnsureCA(ctx, store("gatewire-ca"), "gatewire test CA", 0, now)
	if err != nil || !created {
		t.Fatalf("EnsureCA: created %t, %v", created, err)
	}
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "gatewire-system", Name: "gatewire-ca"}, &secret); err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeTLS || len(secret.Data["tls.key"]) == 0 || string(secret.Data["ca.crt"]) != string(ca.TrustBundle()) {
		t.Errorf("CA Secret: type %s, keys %v", secret.Type, keys(secret.Data))
	}
	again, created, err := certs.EnsureCA(ctx, store("gatewire-ca"), "gatewire test CA", 0, now)
	if err != nil || created || !again.Certificate().Equal(ca.Certificate()) {
		t.Fatalf("EnsureCA again: created %t, %v", created, err)
	}

	req := certs.XDSServerRequest(certstest.TrustDomain, []string{"gatewire-xds.gatewire-system.svc"}, 0)
	r, err := certs.Ensure(ctx, store("gatewire-xds-tls"), ca, req, now)
	if err != nil || !r.Issued {
		t.Fatalf("Ensure: %+v, %v", r, err)
	}
	before := secretVersion(t, c, "gatewire-xds-tls")
	r, err = certs.Ensure(ctx, store("gatewire-xds-tls"), ca, req, now.Add(time.Hour))
	if err != nil || r.Issued {
		t.Fatalf("Ensure again: issued %t, %v", r.Issued, err)
	}
	if after := secretVersion(t, c, "gatewire-xds-tls"); after != before {
		t.Errorf("Ensure of a good certificate wrote its Secret (resourceVersion %s → %s)", before, after)
	}

	// A CA brought from outside, written as cert-manager writes it.
	own := certstest.CA(t, "company CA")
	byo := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gatewire-system", Name: "byo-ca", Annotations: map[string]string{"cert-manager.io/certificate-name": "gatewire-ca"}},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": own.Bundle().Cert, "tls.key": own.Bundle().Key, "ca.crt": own.TrustBundle()},
	}
	if err := c.Create(ctx, byo); err != nil {
		t.Fatal(err)
	}
	got, created, err := certs.EnsureCA(ctx, store("byo-ca"), "unused", 0, now)
	if err != nil || created || !got.Certificate().Equal(own.Certificate()) {
		t.Fatalf("EnsureCA of a brought CA: created %t, same %t, %v", created, err == nil && got.Certificate().Equal(own.Certificate()), err)
	}

	// A renewal keeps what other managers set on the Secret.
	if err := c.Get(ctx, client.ObjectKey{Namespace: "gatewire-system", Name: "gatewire-xds-tls"}, &secret); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Annotations = map[string]string{"example.com/owner": "team-a"}
	if err := c.Patch(ctx, &secret, patch, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	r, err = certs.Ensure(ctx, store("gatewire-xds-tls"), ca, req, now.Add(6*24*time.Hour))
	if err != nil || !r.Issued {
		t.Fatalf("renewal: issued %t, %v", r.Issued, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "gatewire-system", Name: "gatewire-xds-tls"}, &secret); err != nil {
		t.Fatal(err)
	}
	if secret.Annotations["example.com/owner"] != "team-a" || string(secret.Data["tls.crt"]) != string(r.Bundle.Cert) {
		t.Errorf("after the renewal: annotations %v, new certificate stored %t", secret.Annotations, string(secret.Data["tls.crt"]) == string(r.Bundle.Cert))
	}
}

func secretVersion(t *testing.T, c client.Client, name string) string {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "gatewire-system", Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return s.ResourceVersion
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCreateOnlyCA creates the CA from two writers at once: one wins, and
// both end up with the winner's CA.
func TestCreateOnlyCA(t *testing.T) {
	c, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ca-race"}}); err != nil {
		t.Fatal(err)
	}
	store := kubesecret.Store{Client: c, Namespace: "ca-race", Name: "gatewire-ca", FieldOwner: "gatewire-test", CreateOnly: true}
	first, err := certs.NewCA("first", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(ctx, first.Bundle()); err != nil {
		t.Fatal(err)
	}
	// The second writer read the store before the first saved.
	second, err := certs.NewCA("second", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(ctx, second.Bundle()); !errors.Is(err, certs.ErrExists) {
		t.Fatalf("second Save = %v, want ErrExists", err)
	}
	got, created, err := certs.EnsureCA(ctx, store, "third", 0, time.Now())
	if err != nil || created || !got.Certificate().Equal(first.Certificate()) {
		t.Fatalf("EnsureCA after the race: created %t, %v", created, err)
	}
}
