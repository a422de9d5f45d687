package resources

import (
	"strings"
	"testing"
)

const (
	tlsGateway = `{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: gw1, namespace: infra},
  spec: {gatewayClassName: gc, listeners: [{name: https, protocol: HTTPS, port: 443,
    tls: {certificateRefs: [{name: cert}, {name: shared, namespace: certs}]}}]}}`
	secretYAML = `{apiVersion: v1, kind: Secret, metadata: {name: NAME, namespace: NS}, type: kubernetes.io/tls}`
	grantYAML  = `{apiVersion: gateway.networking.k8s.io/v1beta1, kind: ReferenceGrant, metadata: {name: g, namespace: NS},
  spec: {from: [{group: gateway.networking.k8s.io, kind: KIND, namespace: FROM}], to: [{group: "", kind: TO}]}}`
	policyYAML = `{apiVersion: gateway.networking.k8s.io/v1alpha3, kind: BackendTLSPolicy, metadata: {name: p, namespace: app},
  spec: {targetRefs: [{group: "", kind: Service, name: SVC}],
    validation: {hostname: svc.example.com, caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]}}}`
	configMapYAML = `{apiVersion: v1, kind: ConfigMap, metadata: {name: NAME, namespace: app}, data: {ca.crt: x}}`
	crossRoute    = `{apiVersion: gateway.networking.k8s.io/v1alpha2, kind: TCPRoute, metadata: {name: t, namespace: app},
  spec: {parentRefs: [{name: gw2, namespace: infra}], rules: [{backendRefs: [{name: db, namespace: data, port: 5432}]}]}}`
)

func fill(y string, kv ...string) string { return strings.NewReplacer(kv...).Replace(y) }

func TestSecretsAffectTheGatewaysThatReferenceThem(t *testing.T) {
	x := NewIndex()
	gw1 := nn("infra", "gw1")
	apply(t, x, tlsGateway)
	apply(t, x, gw2YAML)
	wantGateways(t, "its own certificate", apply(t, x, fill(secretYAML, "NAME", "cert", "NS", "infra")), gw1)
	wantGateways(t, "a certificate in another namespace", apply(t, x, fill(secretYAML, "NAME", "shared", "NS", "certs")), gw1)
	wantGateways(t, "an unreferenced secret", apply(t, x, fill(secretYAML, "NAME", "other", "NS", "infra")))
	wantGateways(t, "removing the certificate", x.Remove(KindSecret, "infra", "cert"), gw1)
	if x.Secret(nn("certs", "shared")) == nil {
		t.Error("the shared secret is not in the index")
	}
}

func TestReferenceGrantsAffectTheirFromNamespaces(t *testing.T) {
	x := NewIndex()
	gw1, gw2 := nn("infra", "gw1"), nn("infra", "gw2")
	apply(t, x, tlsGateway)
	apply(t, x, gw2YAML)
	apply(t, x, crossRoute)
	wantGateways(t, "a grant for the gateway's secret", apply(t, x, fill(grantYAML, "NS", "certs", "KIND", "Gateway", "FROM", "infra", "TO", "Secret")), gw1)
	wantGateways(t, "the grant changed to the route's kind", apply(t, x, fill(grantYAML, "NS", "certs", "KIND", "TCPRoute", "FROM", "app", "TO", "Service")), gw1)
	wantGateways(t, "a grant for the route's backend", apply(t, x, fill(grantYAML, "NS", "data", "KIND", "TCPRoute", "FROM", "app", "TO", "Service")), gw2)
	wantGateways(t, "a grant for another kind", apply(t, x, fill(strings.Replace(grantYAML, "name: g,", "name: h,", 1), "NS", "data", "KIND", "HTTPRoute", "FROM", "app", "TO", "Service")))
	if got := x.ReferenceGrantsIn("data"); len(got) != 2 || got[0].Name != "g" || got[1].Name != "h" {
		t.Errorf("ReferenceGrantsIn(data) = %v, want g and h", got)
	}
	wantGateways(t, "removing the grant", x.Remove(KindReferenceGrant, "data", "g"), gw2)
}

func TestBackendTLSPoliciesAndTheirConfigMaps(t *testing.T) {
	x := NewIndex()
	gw1 := nn("infra", "gw1")
	apply(t, x, gw1YAML)
	apply(t, x, strings.Replace(routeTo, "GW", "gw1", 1))
	wantGateways(t, "a policy for the route's Service", apply(t, x, fill(policyYAML, "SVC", "svc")), gw1)
	wantGateways(t, "its CA ConfigMap", apply(t, x, fill(configMapYAML, "NAME", "ca")), gw1)
	wantGateways(t, "another ConfigMap", apply(t, x, fill(configMapYAML, "NAME", "other")))
	wantGateways(t, "the policy moving to another Service", apply(t, x, fill(policyYAML, "SVC", "other")), gw1)
	wantGateways(t, "its CA ConfigMap, now of an unused Service", apply(t, x, fill(configMapYAML, "NAME", "ca")))
	if got := x.BackendTLSPoliciesFor(nn("app", "other")); len(got) != 1 || got[0].Spec.Validation.Hostname != "svc.example.com" {
		t.Errorf("BackendTLSPoliciesFor(app/other) = %v, want the v1alpha3 policy decoded", got)
	}
}

func TestRouteKindsOfOlderVersions(t *testing.T) {
	x := NewIndex()
	apply(t, x, gw2YAML)
	wantGateways(t, "a v1alpha2 TCPRoute", apply(t, x, crossRoute), nn("infra", "gw2"))
	routes := x.TCPRoutesFor(nn("infra", "gw2"))
	if len(routes) != 1 || len(routes[0].Spec.Rules) != 1 || *routes[0].Spec.Rules[0].BackendRefs[0].Port != 5432 {
		t.Fatalf("TCPRoutesFor = %v, want the route decoded", routes)
	}
	if got := x.HTTPRoutesFor(nn("infra", "gw2")); len(got) != 0 {
		t.Errorf("HTTPRoutesFor lists routes of another kind: %v", got)
	}
	wantGateways(t, "its backend Service", apply(t, x, `{apiVersion: v1, kind: Service, metadata: {name: db, namespace: data}}`), nn("infra", "gw2"))
}

func TestGatewayTLSReferences(t *testing.T) {
	x := NewIndex()
	gw := `{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: gw1, namespace: infra},
  spec: {gatewayClassName: gc, listeners: [{name: http, protocol: HTTP, port: 80}],
    tls: {backend: {clientCertificateRef: {name: client}},
      frontend: {default: {validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: ca, namespace: pki}]}}}}}}`
	gw1 := nn("infra", "gw1")
	apply(t, x, gw)
	wantGateways(t, "its client certificate", apply(t, x, fill(secretYAML, "NAME", "client", "NS", "infra")), gw1)
	wantGateways(t, "its client CA", apply(t, x, `{apiVersion: v1, kind: ConfigMap, metadata: {name: ca, namespace: pki}}`), gw1)
	wantGateways(t, "a grant for its client CA", apply(t, x, fill(grantYAML, "NS", "pki", "KIND", "Gateway", "FROM", "infra", "TO", "ConfigMap")), gw1)
}
