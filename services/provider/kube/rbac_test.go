package kube_test

import (
	"log/slog"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/kube"
)

// permissions are the rules the package doc lists, cluster-wide.
var permissions = []rbacv1.PolicyRule{
	{APIGroups: []string{gatewayv1.GroupName}, Verbs: []string{"get", "list", "watch"}, Resources: []string{
		"gatewayclasses", "gateways", "listenersets", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes",
		"referencegrants", "backendtlspolicies"}},
	{APIGroups: []string{gatewayv1.GroupName}, Verbs: []string{"update"}, Resources: []string{
		"gatewayclasses/status", "gateways/status", "listenersets/status", "httproutes/status", "grpcroutes/status",
		"tlsroutes/status", "tcproutes/status", "udproutes/status", "backendtlspolicies/status"}},
	{APIGroups: []string{""}, Verbs: []string{"get", "list", "watch"}, Resources: []string{"namespaces", "services", "secrets", "configmaps"}},
	{APIGroups: []string{"discovery.k8s.io"}, Verbs: []string{"get", "list", "watch"}, Resources: []string{"endpointslices"}},
}

// leasePermissions are the rules of the lease namespace: the Lease, and the
// Events the leader election records.
var leasePermissions = []rbacv1.PolicyRule{
	{APIGroups: []string{"coordination.k8s.io"}, Verbs: []string{"get", "create", "update"}, Resources: []string{"leases"}},
	{APIGroups: []string{""}, Verbs: []string{"create", "patch"}, Resources: []string{"events"}},
}

// TestRunsWithTheDocumentedPermissions runs a provider as a user that has
// only the permissions the package doc lists: it publishes, follows a
// referenced Secret and writes status.
func TestRunsWithTheDocumentedPermissions(t *testing.T) {
	h := newHarness(t)
	user := "provider-" + h.ns
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	h.create(
		&rbacv1.ClusterRole{ObjectMeta: objectMeta("", user), Rules: permissions},
		&rbacv1.ClusterRoleBinding{ObjectMeta: objectMeta("", user), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user}},
		&rbacv1.Role{ObjectMeta: objectMeta(h.ns, "provider"), Rules: leasePermissions},
		&rbacv1.RoleBinding{ObjectMeta: objectMeta(h.ns, "provider"), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "provider"}},
	)
	cfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	ours := h.class(controllerName)
	h.create(ours, secret(h.ns, "cert", "v1"), gateway(h.ns, "gw", ours.Name, secretRef("", "cert")))
	logs := &testkit.LogBuffer{}
	p, err := kube.New(cfg, h.bus, logs.JSONLogger(slog.LevelDebug), h.options())
	if err != nil {
		t.Fatal(err)
	}
	r := h.run(p, logs)
	h.eventually("the provider leads", r.Leading)
	h.published(bus.ResourceKey("Gateway", h.ns, "gw"), nil)
	h.published(bus.ResourceKey("Secret", h.ns, "cert"), nil)
	h.setCert(h.ns, "cert", "v2")
	h.published(bus.ResourceKey("Secret", h.ns, "cert"), func(r *busv1.Resource) bool { return certOf(t, r) == "v2" })
	h.putStatus(bus.StatusKey("Gateway", h.ns, "gw", h.ns, "gw"), gatewayEntry(h.ns, "gw", "True"))
	h.eventually("the status is written", func() bool { return r.StatusWrites() == 1 })
	if lines := logs.JSONLines("Reconciler error"); len(lines) > 0 {
		t.Errorf("reconcile errors: %v", lines)
	}
}
