package validate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/kubetest"
)

// serverCases are objects, valid or not, that TestMatchesAPIServer checks
// besides the cases of TestObject.
var serverCases = []struct{ name, in string }{
	{"httproute of the benchmark", gatewaytest.TenantRoute("bench", "eg", 7)},
	{"gateway https", `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: tls}
spec:
  gatewayClassName: gatewire
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
  - {name: tls, protocol: TLS, port: 8443, hostname: a.example.com, tls: {mode: Passthrough}}`},
	{"gateway passthrough with certificates", `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: tls}
spec:
  gatewayClassName: gatewire
  listeners: [{name: tls, protocol: TLS, port: 8443, tls: {mode: Passthrough, certificateRefs: [{name: cert}]}}]`},
	{"tlsroute", `
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: r}
spec:
  parentRefs: [{name: tls}]
  hostnames: [a.example.com]
  rules: [{backendRefs: [{name: b, port: 443}]}]`},
	{"tcproute without port", `
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: tcp}]
  rules: [{backendRefs: [{name: b}]}]`},
	{"httproute too many matches", `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  rules:
  - matches: [{path: {type: Exact, value: "no-slash"}}]
    filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /x}}}]
    backendRefs: [{name: b, port: 80, weight: -1}]`},
	{"backendtlspolicy", `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p}
spec:
  targetRefs: [{group: "", kind: Service, name: b}]
  validation: {hostname: b.example.com, wellKnownCACertificates: System}`},
	{"endpointslice loopback", `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: local}
addressType: IPv4
endpoints: [{addresses: [127.0.0.1]}]`},
	{"service headless", `
apiVersion: v1
kind: Service
metadata: {name: headless}
spec: {clusterIP: None}`},
}

// knownDifferences are the cases where Object deliberately answers
// otherwise than the API server, and why.
var knownDifferences = map[string]string{
	"endpointslice loopback": "a loopback endpoint is how a local backend is reached on a host",
}

// TestMatchesAPIServer creates every case of TestObject and serverCases on a
// real kube-apiserver with the Gateway API CRDs (envtest, server-side dry
// run) and checks that the server refuses exactly what Object refuses; for
// Gateway API kinds, with the same errors.
func TestMatchesAPIServer(t *testing.T) {
	kube := kubetest.New(t)
	c, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Clone(serverCases)
	for _, tc := range cases {
		if tc.name != "unknown kind" { // the server knows Deployments
			all = append(all, struct{ name, in string }{tc.name, tc.in})
		}
	}
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			server := serverErrors(t, c, object(t, tc.in))
			ours := errorStrings(t, tc.in)
			if why := knownDifferences[tc.name]; why != "" {
				t.Logf("known difference (%s): server %q, ours %q", why, server, ours)
				return
			}
			if (len(server) == 0) != (len(ours) == 0) {
				t.Fatalf("the server says %q, Object says %q", server, ours)
			}
			if strings.HasPrefix(object(t, tc.in)["apiVersion"].(string), GatewayGroup) {
				slices.Sort(server)
				slices.Sort(ours)
				if !slices.Equal(server, ours) {
					t.Errorf("the server says\n%s\nObject says\n%s", strings.Join(server, "\n"), strings.Join(ours, "\n"))
				}
			}
		})
	}
}

// serverErrors creates obj with a server-side dry run and returns the
// field errors of the refusal as "<field>: <message>"; none when the server
// accepts it.
func serverErrors(t *testing.T, c client.Client, obj map[string]any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := &unstructured.Unstructured{Object: obj}
	if u.GetKind() != "GatewayClass" && u.GetKind() != "Namespace" && u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	err := c.Create(ctx, u, client.DryRunAll)
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &status) || status.Status().Details == nil:
		t.Fatalf("create: %v", err)
	}
	var out []string
	for _, cause := range status.Status().Details.Causes {
		out = append(out, cause.Field+": "+cause.Message)
	}
	return out
}
