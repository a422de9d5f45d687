package kube_test

import (
	"encoding/base64"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// quiet is how long a test waits to see that nothing is published.
const quiet = 2 * time.Second

// certOf returns the tls.crt a published Secret holds.
func certOf(t *testing.T, res *busv1.Resource) string {
	data, _ := object(t, res)["data"].(map[string]any)
	s, _ := data[corev1.TLSCertKey].(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// setCert writes value as the tls.crt of Secret ns/name.
func (h *harness) setCert(ns, name, value string) {
	h.t.Helper()
	var s corev1.Secret
	if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		h.t.Fatal(err)
	}
	s.Data[corev1.TLSCertKey] = []byte(value)
	if err := h.c.Update(h.ctx, &s); err != nil {
		h.t.Fatal(err)
	}
}

func TestOnlyReferencedSecretsArePublished(t *testing.T) {
	h := newHarness(t)
	ns := h.ns
	ours := h.class(controllerName)
	h.create(ours, secret(ns, "cert", "v1"), secret(ns, "unreferenced", "v1"),
		gateway(ns, "gw", ours.Name, secretRef("", "cert")))
	h.start(h.options())
	certKey := bus.ResourceKey("Secret", ns, "cert")
	if got := certOf(t, h.published(certKey, nil)); got != "v1" {
		t.Errorf("published certificate %q, want v1", got)
	}
	unrefKey := bus.ResourceKey("Secret", ns, "unreferenced")
	if h.resource(unrefKey) != nil {
		t.Errorf("%s is published though no Gateway references it", unrefKey)
	}

	// A change of an unreferenced Secret publishes nothing at all.
	changes := h.watchResources()
	h.setCert(ns, "unreferenced", "v2")
	if got := changes(quiet); len(got) != 0 {
		t.Errorf("a change of an unreferenced Secret published %v", got)
	}

	// A change of a referenced one is published.
	h.setCert(ns, "cert", "v2")
	h.published(certKey, func(r *busv1.Resource) bool { return certOf(t, r) == "v2" })

	// Referencing the other Secret publishes it; dropping the reference to
	// the first deletes its key.
	var gw gatewayv1.Gateway
	if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "gw"}, &gw); err != nil {
		t.Fatal(err)
	}
	gw.Spec.Listeners[1].TLS.CertificateRefs = []gatewayv1.SecretObjectReference{secretRef("", "unreferenced")}
	if err := h.c.Update(h.ctx, &gw); err != nil {
		t.Fatal(err)
	}
	h.published(unrefKey, func(r *busv1.Resource) bool { return certOf(t, r) == "v2" })
	h.gone(certKey)

	// Deleting a referenced Secret deletes its key.
	if err := h.c.Delete(h.ctx, secret(ns, "unreferenced", "")); err != nil {
		t.Fatal(err)
	}
	h.gone(unrefKey)
}

// TestCrossNamespaceSecretsNeedAReferenceGrant checks that a Gateway cannot
// pull another namespace's Secret onto the bus without a ReferenceGrant.
func TestCrossNamespaceSecretsNeedAReferenceGrant(t *testing.T) {
	h := newHarness(t)
	certs := cluster.Namespace(t, "certs")
	ours := h.class(controllerName)
	h.create(ours, secret(certs, "shared", "v1"), gateway(h.ns, "gw", ours.Name, secretRef(certs, "shared")))
	h.start(h.options(h.ns, certs))
	key := bus.ResourceKey("Secret", certs, "shared")
	changes := h.watchResources()
	if got := changes(quiet); slices.Contains(got, key+" put") || h.resource(key) != nil {
		t.Fatalf("%s is published without a ReferenceGrant", key)
	}
	h.create(grant(certs, "gateways", h.ns, "shared"))
	h.published(key, nil)
	if err := h.c.Delete(h.ctx, grant(certs, "gateways", h.ns, "shared")); err != nil {
		t.Fatal(err)
	}
	h.gone(key)
	// A grant of every Secret of the namespace works too.
	h.create(grant(certs, "all", h.ns, ""))
	h.published(key, nil)
}

func TestBackendTLSPolicyConfigMapsArePublished(t *testing.T) {
	h := newHarness(t)
	h.create(configMap(h.ns, "ca", "ca-1"), configMap(h.ns, "other", "x"), service(h.ns, "backend"),
		backendTLSPolicy(h.ns, "policy", "backend", "ca"))
	h.start(h.options())
	key := bus.ResourceKey("ConfigMap", h.ns, "ca")
	h.published(key, nil)
	var cm corev1.ConfigMap
	if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "ca"}, &cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["ca.crt"] = "ca-2"
	if err := h.c.Update(h.ctx, &cm); err != nil {
		t.Fatal(err)
	}
	h.published(key, func(r *busv1.Resource) bool {
		data, _ := object(t, r)["data"].(map[string]any)
		return data["ca.crt"] == "ca-2"
	})
	if h.resource(bus.ResourceKey("ConfigMap", h.ns, "other")) != nil {
		t.Error("an unreferenced ConfigMap is published")
	}
	if err := h.c.Delete(h.ctx, backendTLSPolicy(h.ns, "policy", "", "")); err != nil {
		t.Fatal(err)
	}
	h.gone(key)
}
