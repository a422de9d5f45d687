package kubetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/kubetest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

var kube *kubetest.Env

func TestMain(m *testing.M) { goleak.VerifyTestMain(kubetest.Wrap(m, &kube), testkit.IgnoreKlog()) }

func TestStartWithoutAssetsSaysWhatToRun(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	_, err := kubetest.Start()
	if !errors.Is(err, kubetest.ErrNoAssets) {
		t.Fatalf("Start without KUBEBUILDER_ASSETS: %v; want ErrNoAssets", err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	if _, err := kubetest.Start(); !errors.Is(err, kubetest.ErrNoAssets) {
		t.Fatalf("Start with an empty KUBEBUILDER_ASSETS folder: %v; want ErrNoAssets", err)
	}
	if want := "make envtest-assets"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// TestEveryRouteKindIsServed creates one object of each Gateway API kind.
func TestEveryRouteKindIsServed(t *testing.T) {
	c, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	ns := kube.Namespace(t, "kinds")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	parent := []gatewayv1.ParentReference{{Name: "gw"}}
	backend := []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "svc", Port: new(gatewayv1.PortNumber(80))}}}
	meta := metav1.ObjectMeta{Namespace: ns, Name: "r"}
	for _, obj := range []client.Object{
		&gatewayv1.TLSRoute{ObjectMeta: meta, Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent},
			Hostnames:       []gatewayv1.Hostname{"example.com"},
			Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: backend}}}},
		&gatewayv1.TCPRoute{ObjectMeta: meta, Spec: gatewayv1.TCPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent},
			Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: backend}}}},
		&gatewayv1.UDPRoute{ObjectMeta: meta, Spec: gatewayv1.UDPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent},
			Rules:           []gatewayv1.UDPRouteRule{{BackendRefs: backend}}}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Errorf("create %T: %v", obj, err)
		}
	}
}

func TestUserClientIsSubjectToRBAC(t *testing.T) {
	admin, err := kube.Client()
	if err != nil {
		t.Fatal(err)
	}
	ns := kube.Namespace(t, "rbac")
	user, err := kube.UserClient("reader", "readers")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var list gatewayv1.GatewayList
	if err := user.List(ctx, &list, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Fatalf("list Gateways without a role: %v; want Forbidden", err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gateway-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{gatewayv1.GroupName}, Resources: []string{"gateways"}, Verbs: []string{"list"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "readers"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "readers"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// RBAC caches are updated from a watch: allow a moment.
	testkit.EventuallyValue(t, 10*time.Second, "list Gateways with a role", func() (error, bool) {
		err := user.List(ctx, &list, client.InNamespace(ns))
		return err, err == nil
	})
	if err := user.List(ctx, &gatewayv1.HTTPRouteList{}, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
		t.Errorf("list HTTPRoutes, which the role does not grant: %v; want Forbidden", err)
	}
}
