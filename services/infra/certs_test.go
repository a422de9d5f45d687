package infra_test

import (
	"context"
	"crypto/x509"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/infra"
)

// gatewayOf reads the gateway a bundle's certificate names, and fails the
// test unless it verifies as a client certificate against its own CA file.
func gatewayOf(t *testing.T, b *certs.Bundle) string {
	t.Helper()
	leaf, err := b.Leaf()
	if err != nil {
		t.Fatal(err)
	}
	roots, err := b.Pool()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client certificate does not verify: %v", err)
	}
	ns, name, err := certs.GatewayOf(leaf)
	if err != nil {
		t.Fatal(err)
	}
	return ns + "/" + name
}

// TestHostModeCertificates: the CA, the xds server's certificate and each
// gateway's client certificate under the state folder, the bootstrap using
// the latter over mTLS, and all of it gone with the gateway.
func TestHostModeCertificates(t *testing.T) {
	b := newBus(t)
	state := t.TempDir()
	dir := filepath.Join(state, "bootstrap")
	s := start(t, hostConfig(dir), b)
	putProxy(t, b, proxy("shop", "edge"))
	certDir := filepath.Join(dir, "shop-edge.tls")
	testkit.Eventually(t, 10*time.Second, "bootstrap written", func() bool { return exists(s.BootstrapPath("shop", "edge")) })

	gw, err := (certs.FileStore{Files: certs.DirFiles(certDir)}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := gatewayOf(t, gw); got != "shop/edge" {
		t.Errorf("client certificate of shop/edge names %s", got)
	}
	if fi, err := os.Stat(filepath.Join(certDir, "tls.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("client key: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}
	ca, err := certs.ParseCA(mustLoad(t, certs.DirFiles(filepath.Join(state, "ca"))))
	if err != nil {
		t.Fatalf("the CA beside the bootstrap folder: %v", err)
	}
	if string(gw.CA) != string(ca.TrustBundle()) {
		t.Error("the gateway's ca.crt is not the CA")
	}
	server := mustLoad(t, certs.DirFiles(filepath.Join(state, "xds-tls")))
	leaf, _ := server.Leaf()
	roots, _ := server.Pool()
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("xds server certificate for 127.0.0.1: %v", err)
	}

	bs := readBootstrap(t, s.BootstrapPath("shop", "edge"))
	var up tlsv3.UpstreamTlsContext
	if err := bs.GetStaticResources().GetClusters()[0].GetTransportSocket().GetTypedConfig().UnmarshalTo(&up); err != nil {
		t.Fatalf("xds cluster without TLS: %v", err)
	}
	path := up.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()[0].GetSdsConfig().GetPathConfigSource().GetPath()
	if path != filepath.Join(certDir, "certificate.sds.json") || !exists(path) {
		t.Errorf("bootstrap reads its certificate from %q, want the SDS file of %s", path, certDir)
	}
	if sds, _ := os.ReadFile(path); !strings.Contains(string(sds), filepath.Join(certDir, "tls.crt")) {
		t.Errorf("SDS file does not name the certificate:\n%s", sds)
	}

	deleteKey(t, b, "shop", "edge")
	testkit.Eventually(t, 10*time.Second, "certificate folder removed", func() bool { return !exists(certDir) })
}

func mustLoad(t *testing.T, files certs.Files) *certs.Bundle {
	t.Helper()
	b, err := (certs.FileStore{Files: files}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostModeInsecure: GATEWIRE_XDS_INSECURE=true writes plaintext
// bootstraps and no certificate at all, and says so.
func TestHostModeInsecure(t *testing.T) {
	b := newBus(t)
	state := t.TempDir()
	dir := filepath.Join(state, "bootstrap")
	cfg := hostConfig(dir)
	cfg.XDSInsecure = true
	logs := &testkit.LogBuffer{}
	s, err := infra.New(cfg, b, logs.Logger(slog.LevelInfo))
	if err != nil {
		t.Fatal(err)
	}
	run(t, s)
	putProxy(t, b, proxy("dev", "edge"))
	testkit.Eventually(t, 10*time.Second, "bootstrap written", func() bool { return exists(s.BootstrapPath("dev", "edge")) })
	if ts := readBootstrap(t, s.BootstrapPath("dev", "edge")).GetStaticResources().GetClusters()[0].GetTransportSocket(); ts != nil {
		t.Errorf("insecure bootstrap with a transport socket: %v", ts)
	}
	for _, p := range []string{filepath.Join(dir, "dev-edge.tls"), filepath.Join(state, "ca"), filepath.Join(state, "xds-tls")} {
		if exists(p) {
			t.Errorf("%s exists in the insecure mode", p)
		}
	}
	if !logs.Has("WARN", "GATEWIRE_XDS_INSECURE=true") {
		t.Errorf("no warning about the insecure mode in:\n%s", logs)
	}
}

// TestKubernetesCertificates: the CA Secret created in the infra service's
// namespace, the xds server's Secret, and a client certificate Secret per
// gateway, owned by its Deployment, mounted into it, removed with it.
func TestKubernetesCertificates(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	k.startKube(kubeConfig(), b)
	var ca, server corev1.Secret
	k.getSecret(k.ns, "gatewire-ca", &ca)
	k.getSecret(k.ns, "gatewire-xds-tls", &server)
	if _, err := certs.ParseCA(secretBundle(&ca)); err != nil {
		t.Fatalf("CA Secret: %v", err)
	}
	leaf, _ := secretBundle(&server).Leaf()
	if err := leaf.VerifyHostname("gatewire-xds.gatewire-system.svc"); err != nil {
		t.Errorf("xds server certificate: %v", err)
	}

	putProxy(t, b, kubeProxy(k.ns, "edge"))
	o := k.waitObjects(k.ns, "gatewire-edge", "objects applied", nil)
	var gw corev1.Secret
	testkit.Eventually(t, waitTimeout, "client certificate Secret", func() bool {
		return k.c.Get(k.ctx, client.ObjectKey{Namespace: k.ns, Name: "gatewire-edge"}, &gw) == nil
	})
	if gw.Type != corev1.SecretTypeTLS || gatewayOf(t, secretBundle(&gw)) != k.ns+"/edge" {
		t.Errorf("client certificate Secret: type %s", gw.Type)
	}
	if len(gw.OwnerReferences) != 1 || gw.OwnerReferences[0].Kind != "Deployment" || gw.OwnerReferences[0].UID != o.dep.UID {
		t.Errorf("client certificate Secret owners %+v, want the Deployment %s", gw.OwnerReferences, o.dep.UID)
	}
	mounted := false
	for _, v := range o.dep.Spec.Template.Spec.Volumes {
		mounted = mounted || (v.Secret != nil && v.Secret.SecretName == "gatewire-edge")
	}
	if !mounted {
		t.Error("the Deployment does not mount the client certificate Secret")
	}
	if o.cm.Data["certificate.sds.json"] == "" || o.cm.Data["trusted-ca.sds.json"] == "" {
		t.Errorf("ConfigMap without the SDS files: keys %v", keysOf(o.cm.Data))
	}

	deleteKey(t, b, k.ns, "edge")
	k.waitGone(k.ns, "gatewire-edge")
	testkit.Eventually(t, waitTimeout, "client certificate Secret removed", func() bool {
		return k.c.Get(k.ctx, client.ObjectKey{Namespace: k.ns, Name: "gatewire-edge"}, &gw) != nil
	})
}

func (k *kubeTest) getSecret(ns, name string, s *corev1.Secret) {
	k.t.Helper()
	testkit.Eventually(k.t, waitTimeout, "Secret "+name, func() bool { return k.c.Get(k.ctx, client.ObjectKey{Namespace: ns, Name: name}, s) == nil })
}

func secretBundle(s *corev1.Secret) *certs.Bundle {
	return &certs.Bundle{Cert: s.Data["tls.crt"], Key: s.Data["tls.key"], CA: s.Data["ca.crt"]}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
