package deploy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scope says where a grant applies.
type scope int

const (
	everywhere   scope = iota // every namespace, and cluster-scoped resources
	ownNamespace              // gatewire-system only
)

// grant is one permission a service needs: verbs on a resource
// ("<resource>" or "<resource>/<subresource>") of an API group.
type grant struct {
	group, resource string
	verbs           []string
	scope           scope
}

const gatewayGroup = "gateway.networking.k8s.io"

var (
	read  = []string{"get", "list", "watch"}
	lease = grant{"coordination.k8s.io", "leases", []string{"get", "create", "update"}, ownNamespace}
)

// The Gateway API resources the provider reads, and those whose status it
// writes.
var (
	gatewayKinds = []string{
		"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes",
		"tcproutes", "udproutes", "referencegrants", "backendtlspolicies", "listenersets",
	}
	statusKinds = []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes",
		"backendtlspolicies", "listenersets"}
)

// grants is what each service may do: exactly this, nothing more. translator
// and xds may do nothing.
var grants = map[string][]grant{
	"provider":   providerGrants(),
	"infra":      infraGrants(),
	"translator": nil,
	"xds":        nil,
	// certgen also gets and patches its own Secrets, by name (which an
	// access review without a name does not show; rbac_calls checks it).
	"certgen": {{"", "secrets", []string{"create"}, ownNamespace}},
}

// providerGrants follow services/provider/kube: it publishes the Gateway API
// kinds, Namespaces, Services, EndpointSlices and the referenced Secrets and
// ConfigMaps (following their metadata: list and watch), and writes status
// with update.
func providerGrants() []grant {
	g := []grant{
		lease,
		{"", "events", []string{"create", "patch"}, ownNamespace},
		{"", "namespaces", read, everywhere},
		{"", "services", read, everywhere},
		{"", "secrets", read, everywhere},
		{"", "configmaps", read, everywhere},
		{"discovery.k8s.io", "endpointslices", read, everywhere},
	}
	for _, kind := range gatewayKinds {
		g = append(g, grant{gatewayGroup, kind, read, everywhere})
	}
	for _, kind := range statusKinds {
		g = append(g, grant{gatewayGroup, kind + "/status", []string{"update"}, everywhere})
	}
	return g
}

// infraGrants follow services/infra/kube: server-side apply (create and
// patch), prune (list and delete), and a watch of the Services it made;
// the gateways' client certificates, applied and deleted, never read (the
// CA and the xds server's certificate are read by name, see rbac_calls).
func infraGrants() []grant {
	apply := []string{"list", "create", "patch", "delete"}
	return []grant{
		lease,
		{"", "serviceaccounts", apply, everywhere},
		{"", "configmaps", apply, everywhere},
		{"", "services", append([]string{"watch"}, apply...), everywhere},
		{"apps", "deployments", apply, everywhere},
		{"", "secrets", []string{"create", "patch", "delete"}, everywhere},
	}
}

// resource is one resource the test asks about.
type resource struct {
	group, name string // name may be "<resource>/<subresource>"
	namespaced  bool
}

// universe is every resource the test asks about: all those granted, and
// those a compromised service would want.
func universe() []resource {
	u := []resource{
		{"", "namespaces", false}, {"", "nodes", false},
		{"", "services", true}, {"", "secrets", true}, {"", "configmaps", true},
		{"", "serviceaccounts", true}, {"", "serviceaccounts/token", true},
		{"", "pods", true}, {"", "pods/exec", true}, {"", "events", true},
		{"events.k8s.io", "events", true}, {"discovery.k8s.io", "endpointslices", true},
		{"apps", "deployments", true}, {"apps", "deployments/scale", true},
		{"apps", "statefulsets", true}, {"apps", "daemonsets", true},
		{"coordination.k8s.io", "leases", true},
		{"policy", "poddisruptionbudgets", true}, {"autoscaling", "horizontalpodautoscalers", true},
		{"rbac.authorization.k8s.io", "roles", true}, {"rbac.authorization.k8s.io", "rolebindings", true},
		{"rbac.authorization.k8s.io", "clusterroles", false}, {"rbac.authorization.k8s.io", "clusterrolebindings", false},
		{"apiextensions.k8s.io", "customresourcedefinitions", false},
		{"admissionregistration.k8s.io", "validatingadmissionpolicies", false},
	}
	for _, kind := range gatewayKinds {
		namespaced := kind != "gatewayclasses"
		u = append(u, resource{gatewayGroup, kind, namespaced}, resource{gatewayGroup, kind + "/status", namespaced})
	}
	return u
}

var allVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// allowed says whether grants allow verb on r in namespace ns ("" for all
// namespaces or a cluster-scoped resource).
func allowed(grants []grant, r resource, verb, ns string) bool {
	for _, g := range grants {
		if g.group != r.group || g.resource != r.name || (g.scope == ownNamespace && ns != systemNamespace) {
			continue
		}
		for _, v := range g.verbs {
			if v == verb {
				return true
			}
		}
	}
	return false
}

// serviceAccountConfig acts as the ServiceAccount of a service: the API
// server adds the groups of service accounts itself.
func serviceAccountConfig(t testing.TB, service string) *rest.Config {
	t.Helper()
	cfg := adminConfig(t, nil)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: fmt.Sprintf("system:serviceaccount:%s:gatewire-%s", systemNamespace, service),
	}
	return cfg
}

// can asks the API server whether the client's user may do verb on r in ns.
func can(ctx context.Context, c client.Client, r resource, verb, ns string) (bool, error) {
	res, sub, _ := strings.Cut(r.name, "/")
	ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: r.group, Resource: res, Subresource: sub,
		},
	}}
	if err := c.Create(ctx, ssar); err != nil {
		return false, fmt.Errorf("can %s %s in %q: %w", verb, r.name, ns, err)
	}
	return ssar.Status.Allowed, nil
}

// installRBAC creates the ServiceAccounts, Roles, ClusterRoles and their
// bindings of the production overlay for real.
func installRBAC(ctx context.Context, t *testing.T) {
	t.Helper()
	c := newClient(t, adminConfig(t, nil))
	others := installFoundation(ctx, t, c, renderOverlay(t, "production"))
	for _, o := range others {
		switch o.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
			if err := apply(ctx, c, o, false); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
}

// waitForGrants waits until the authorizer has seen the bindings of service:
// until every one of its grants is allowed in gatewire-system.
func waitForGrants(ctx context.Context, t *testing.T, c client.Client, service string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, g := range grants[service] {
			ok, err := can(ctx, c, resource{g.group, g.resource, true}, g.verbs[0], systemNamespace)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s: its roles do not take effect: %v", service, err)
	}
}

// TestRBAC acts as the ServiceAccount of each service and checks, verb by
// verb, that it may do exactly what grants says: in gatewire-system, in
// another namespace, and across all namespaces.
func TestRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel) // after the parallel subtests, unlike defer
	installRBAC(ctx, t)
	tenant := apiServer(t).Namespace(t, "tenant")
	for service, want := range grants {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, serviceAccountConfig(t, service))
			waitForGrants(ctx, t, c, service)
			for _, r := range universe() {
				namespaces := []string{""}
				if r.namespaced {
					namespaces = append(namespaces, systemNamespace, tenant)
				}
				for _, ns := range namespaces {
					for _, verb := range allVerbs {
						got, err := can(ctx, c, r, verb, ns)
						if err != nil {
							t.Fatal(err)
						}
						if exp := allowed(want, r, verb, ns); got != exp {
							t.Errorf("%s %s in namespace %q: allowed %v, want %v", verb, groupResource(r), ns, got, exp)
						}
					}
				}
			}
			checkEscalation(ctx, t, c)
			checkRealCalls(ctx, t, service, tenant)
		})
	}
}

func groupResource(r resource) string {
	if r.group == "" {
		return r.name
	}
	return r.name + "." + r.group
}

// checkEscalation checks that no service may impersonate, bind or escalate.
func checkEscalation(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	for _, a := range []struct {
		verb string
		r    resource
	}{
		{"impersonate", resource{"", "users", false}},
		{"impersonate", resource{"", "serviceaccounts", true}},
		{"bind", resource{"rbac.authorization.k8s.io", "clusterroles", false}},
		{"escalate", resource{"rbac.authorization.k8s.io", "clusterroles", false}},
	} {
		ok, err := can(ctx, c, a.r, a.verb, "")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Errorf("%s %s: allowed", a.verb, groupResource(a.r))
		}
	}
}
