package kubemode_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/services/infra/kubemode"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCheckServiceType(t *testing.T) {
	for _, ok := range []string{"ClusterIP", "NodePort", "LoadBalancer"} {
		if err := kubemode.CheckServiceType(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ExternalName", "clusterip"} {
		if err := kubemode.CheckServiceType(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestBootstrapTLS(t *testing.T) {
	tls := kubemode.BootstrapTLS("spiffe://gatewire.local/xds")
	if tls.CertificateSDS != "/etc/envoy/certificate.sds.json" || tls.TrustedCASDS != "/etc/envoy/trusted-ca.sds.json" || tls.ServerID != "spiffe://gatewire.local/xds" {
		t.Errorf("BootstrapTLS = %+v", tls)
	}
}
