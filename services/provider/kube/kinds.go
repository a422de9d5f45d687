package kube

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// kind is one kind the provider publishes.
type kind struct {
	name       string
	gvk        schema.GroupVersionKind
	namespaced bool
	// referenced kinds (Secret, ConfigMap) are published only while a
	// Gateway, a ListenerSet or a BackendTLSPolicy references them; see
	// refs.go.
	referenced bool
	newObject  func() client.Object
	newList    func() client.ObjectList
}

func gatewayKind(name string, namespaced bool, obj func() client.Object, list func() client.ObjectList) kind {
	return kind{name: name, gvk: gatewayv1.SchemeGroupVersion.WithKind(name), namespaced: namespaced, newObject: obj, newList: list}
}

// kinds lists every kind the provider publishes, in the order they are
// published on a resync (the kinds others depend on first).
var kinds = []kind{
	{name: "Namespace", gvk: corev1.SchemeGroupVersion.WithKind("Namespace"),
		newObject: func() client.Object { return &corev1.Namespace{} }, newList: func() client.ObjectList { return &corev1.NamespaceList{} }},
	{name: "Service", gvk: corev1.SchemeGroupVersion.WithKind("Service"), namespaced: true,
		newObject: func() client.Object { return &corev1.Service{} }, newList: func() client.ObjectList { return &corev1.ServiceList{} }},
	{name: "EndpointSlice", gvk: discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), namespaced: true,
		newObject: func() client.Object { return &discoveryv1.EndpointSlice{} }, newList: func() client.ObjectList { return &discoveryv1.EndpointSliceList{} }},
	{name: "Secret", gvk: corev1.SchemeGroupVersion.WithKind("Secret"), namespaced: true, referenced: true,
		newObject: func() client.Object { return &corev1.Secret{} }, newList: func() client.ObjectList { return &corev1.SecretList{} }},
	{name: "ConfigMap", gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), namespaced: true, referenced: true,
		newObject: func() client.Object { return &corev1.ConfigMap{} }, newList: func() client.ObjectList { return &corev1.ConfigMapList{} }},
	gatewayKind("GatewayClass", false, func() client.Object { return &gatewayv1.GatewayClass{} }, func() client.ObjectList { return &gatewayv1.GatewayClassList{} }),
	gatewayKind("Gateway", true, func() client.Object { return &gatewayv1.Gateway{} }, func() client.ObjectList { return &gatewayv1.GatewayList{} }),
	gatewayKind("ListenerSet", true, func() client.Object { return &gatewayv1.ListenerSet{} }, func() client.ObjectList { return &gatewayv1.ListenerSetList{} }),
	gatewayKind("ReferenceGrant", true, func() client.Object { return &gatewayv1.ReferenceGrant{} }, func() client.ObjectList { return &gatewayv1.ReferenceGrantList{} }),
	gatewayKind("BackendTLSPolicy", true, func() client.Object { return &gatewayv1.BackendTLSPolicy{} }, func() client.ObjectList { return &gatewayv1.BackendTLSPolicyList{} }),
	gatewayKind("HTTPRoute", true, func() client.Object { return &gatewayv1.HTTPRoute{} }, func() client.ObjectList { return &gatewayv1.HTTPRouteList{} }),
	gatewayKind("GRPCRoute", true, func() client.Object { return &gatewayv1.GRPCRoute{} }, func() client.ObjectList { return &gatewayv1.GRPCRouteList{} }),
	gatewayKind("TLSRoute", true, func() client.Object { return &gatewayv1.TLSRoute{} }, func() client.ObjectList { return &gatewayv1.TLSRouteList{} }),
	gatewayKind("TCPRoute", true, func() client.Object { return &gatewayv1.TCPRoute{} }, func() client.ObjectList { return &gatewayv1.TCPRouteList{} }),
	gatewayKind("UDPRoute", true, func() client.Object { return &gatewayv1.UDPRoute{} }, func() client.ObjectList { return &gatewayv1.UDPRouteList{} }),
}

// kindNamed returns the kind called name.
func kindNamed(name string) (kind, bool) {
	for _, k := range kinds {
		if k.name == name {
			return k, true
		}
	}
	return kind{}, false
}

// newScheme returns the scheme of the provider's clients: the core kinds
// and the Gateway API's v1.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(gatewayv1.Install(s))
	return s
}

// served is the set of kinds the cluster serves, by name.
type served map[string]kind

func (s served) has(name string) bool {
	_, ok := s[name]
	return ok
}
