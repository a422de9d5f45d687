package deploy

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// checkRealCalls makes the calls each service makes, and some it must not
// be able to make, as its ServiceAccount.
func checkRealCalls(ctx context.Context, t *testing.T, service, tenant string) {
	t.Helper()
	c := newClient(t, serviceAccountConfig(t, service))
	// Only the provider reads Secrets; nobody writes a Role.
	if service != "provider" {
		expect(t, "list secrets in every namespace", c.List(ctx, &corev1.SecretList{}), apierrors.IsForbidden)
	}
	role := &unstructured.Unstructured{}
	role.SetAPIVersion("rbac.authorization.k8s.io/v1")
	role.SetKind("Role")
	role.SetName("gatewire-" + service + "-extra")
	role.SetNamespace(systemNamespace)
	expect(t, "create a Role", c.Create(ctx, role), apierrors.IsForbidden)
	switch service {
	case "provider":
		providerCalls(ctx, t, c, tenant)
	case "infra":
		infraCalls(ctx, t, c, tenant)
	case "certgen":
		certgenCalls(ctx, t, c, tenant)
	default:
		expect(t, "list configmaps in "+systemNamespace,
			c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(systemNamespace)), apierrors.IsForbidden)
		expect(t, "get namespace "+systemNamespace,
			c.Get(ctx, client.ObjectKey{Name: systemNamespace}, &corev1.Namespace{}), apierrors.IsForbidden)
		expect(t, "create a lease", c.Create(ctx, newLease(service, systemNamespace)), apierrors.IsForbidden)
	}
}

// providerCalls: the provider reads the Gateway API and writes status with
// update only; it follows the metadata of Secrets and gets them by name.
func providerCalls(ctx context.Context, t *testing.T, c client.Client, tenant string) {
	t.Helper()
	admin := newClient(t, adminConfig(t, nil))
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: tenant},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "gatewire",
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
	if err := admin.Create(ctx, gw); err != nil {
		t.Fatalf("create Gateway %s/edge: %v", tenant, err)
	}
	expect(t, "list gateways", c.List(ctx, &gatewayv1.GatewayList{}), nil)
	got := &gatewayv1.Gateway{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(gw), got); err != nil {
		t.Fatalf("get Gateway %s/edge: %v", tenant, err)
	}
	before := got.DeepCopy()
	meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{
		Type: string(gatewayv1.GatewayConditionAccepted), Status: metav1.ConditionTrue,
		Reason: string(gatewayv1.GatewayReasonAccepted), ObservedGeneration: got.Generation,
	})
	expect(t, "patch Gateway status", c.Status().Patch(ctx, got.DeepCopy(), client.MergeFrom(before)), apierrors.IsForbidden)
	expect(t, "update Gateway status", c.Status().Update(ctx, got), nil)
	got.Spec.Listeners[0].Port = 8080
	expect(t, "update Gateway spec", c.Update(ctx, got), apierrors.IsForbidden)
	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	expect(t, "list the metadata of secrets", c.List(ctx, secrets), nil)
	expect(t, "get a Secret by name", c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "cert"}, &corev1.Secret{}), apierrors.IsNotFound)
	expect(t, "create a Secret", c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cert", Namespace: tenant}}), apierrors.IsForbidden)
	expect(t, "create a lease in "+systemNamespace, c.Create(ctx, newLease("provider", systemNamespace)), nil)
	expect(t, "create a lease in "+tenant, c.Create(ctx, newLease("provider", tenant)), apierrors.IsForbidden)
}

// infraCalls: infra server-side applies, prunes and deletes the objects of
// an Envoy in a Gateway's namespace; it reads no Secrets and no Gateway API.
func infraCalls(ctx context.Context, t *testing.T, c client.Client, tenant string) {
	t.Helper()
	admin := newClient(t, adminConfig(t, nil))
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("envoy-edge")
	cm.SetNamespace(tenant)
	cm.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "gatewire"})
	_ = unstructured.SetNestedField(cm.Object, "{}", "data", "envoy.yaml")
	expect(t, "apply a new ConfigMap in "+tenant, apply(ctx, c, cm, false), nil)
	_ = unstructured.SetNestedField(cm.Object, "{ }", "data", "envoy.yaml")
	expect(t, "apply a changed ConfigMap in "+tenant, apply(ctx, c, cm, false), nil)
	got := &corev1.ConfigMap{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil || got.Data["envoy.yaml"] != "{ }" {
		t.Fatalf("ConfigMap %s/envoy-edge after apply: %v %v", tenant, got.Data, err)
	}
	expect(t, "get a ConfigMap", c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}), apierrors.IsForbidden)
	expect(t, "update (PUT) a ConfigMap", c.Update(ctx, got.DeepCopy()), apierrors.IsForbidden)
	expect(t, "list ConfigMaps by label", c.List(ctx, &corev1.ConfigMapList{},
		client.MatchingLabels{"app.kubernetes.io/managed-by": "gatewire"}), nil)
	expect(t, "delete a ConfigMap", c.Delete(ctx, got), nil)
	expect(t, "get a Secret", c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "cert"}, &corev1.Secret{}), apierrors.IsForbidden)
	secret := &unstructured.Unstructured{}
	secret.SetAPIVersion("v1")
	secret.SetKind("Secret")
	secret.SetName("gatewire-edge")
	secret.SetNamespace(tenant)
	_ = unstructured.SetNestedField(secret.Object, "kubernetes.io/tls", "type")
	_ = unstructured.SetNestedStringMap(secret.Object, map[string]string{"tls.crt": "", "tls.key": ""}, "data")
	expect(t, "apply a gateway's client certificate Secret in "+tenant, apply(ctx, c, secret, false), nil)
	expect(t, "list Secrets in "+tenant, c.List(ctx, &corev1.SecretList{}, client.InNamespace(tenant)), apierrors.IsForbidden)
	expect(t, "get the CA Secret", c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "gatewire-ca"}, &corev1.Secret{}), apierrors.IsNotFound)
	expect(t, "get the NATS users' Secret", c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "gatewire-nats-provider"}, &corev1.Secret{}), apierrors.IsForbidden)
	expect(t, "list gateways", c.List(ctx, &gatewayv1.GatewayList{}), apierrors.IsForbidden)
	expect(t, "create a lease in "+systemNamespace, c.Create(ctx, newLease("infra", systemNamespace)), nil)
}

// certgenCalls: certgen creates its Secrets in gatewire-system and reads
// those by name only.
func certgenCalls(ctx context.Context, t *testing.T, c client.Client, tenant string) {
	t.Helper()
	expect(t, "get the CA Secret", c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "gatewire-ca"}, &corev1.Secret{}), apierrors.IsNotFound)
	expect(t, "get another Secret", c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "something-else"}, &corev1.Secret{}), apierrors.IsForbidden)
	expect(t, "create a Secret in "+tenant, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: tenant}}), apierrors.IsForbidden)
	expect(t, "list Secrets", c.List(ctx, &corev1.SecretList{}, client.InNamespace(systemNamespace)), apierrors.IsForbidden)
}

func newLease(service, ns string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{GenerateName: "gatewire-" + service + "-", Namespace: ns}}
}

// expect checks err: nil when is is nil, else an error is reports.
func expect(t *testing.T, what string, err error, is func(error) bool) {
	t.Helper()
	switch {
	case is == nil && err != nil:
		t.Errorf("%s: %v, want it allowed", what, err)
	case is != nil && (err == nil || !is(err)):
		t.Errorf("%s: error %v, want a different outcome (forbidden or not found)", what, err)
	}
}
