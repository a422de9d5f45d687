package manifest

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gatewayGroup is the API group of the Gateway API.
const gatewayGroup = gatewayv1.GroupName

// Kind describes one kind the provider publishes.
type Kind struct {
	// Group is the API group; empty for the core group.
	Group string
	// Version is the version objects are published as, whatever version the
	// file spelled: the Gateway API's older versions share the schema of v1
	// (Kubernetes serves them with conversion strategy None), so an object
	// written as gateway.networking.k8s.io/v1beta1 is published as v1, as a
	// controller watching v1 would see it.
	Version string
	Kind    string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool

	// accepts lists the versions a file may use, Version included.
	accepts []string
	// newObject returns the Go type the object is strictly decoded into.
	newObject func() any
}

// APIVersion is the apiVersion of published objects: "<group>/<version>",
// or "<version>" for the core group.
func (k Kind) APIVersion() string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

func (k Kind) accepted(version string) bool {
	for _, v := range k.accepts {
		if v == version {
			return true
		}
	}
	return false
}

// kinds is every kind the provider publishes, by kind name. Kind names are
// unique across the groups below, which the resources bucket key relies on.
var kinds = map[string]Kind{
	"GatewayClass":     gw("GatewayClass", false, func() any { return &gatewayv1.GatewayClass{} }, "v1beta1"),
	"Gateway":          gw("Gateway", true, func() any { return &gatewayv1.Gateway{} }, "v1beta1"),
	"HTTPRoute":        gw("HTTPRoute", true, func() any { return &gatewayv1.HTTPRoute{} }, "v1beta1"),
	"GRPCRoute":        gw("GRPCRoute", true, func() any { return &gatewayv1.GRPCRoute{} }, "v1alpha2"),
	"TLSRoute":         gw("TLSRoute", true, func() any { return &gatewayv1.TLSRoute{} }, "v1alpha2", "v1alpha3"),
	"TCPRoute":         gw("TCPRoute", true, func() any { return &gatewayv1.TCPRoute{} }, "v1alpha2"),
	"UDPRoute":         gw("UDPRoute", true, func() any { return &gatewayv1.UDPRoute{} }, "v1alpha2"),
	"ReferenceGrant":   gw("ReferenceGrant", true, func() any { return &gatewayv1.ReferenceGrant{} }, "v1beta1", "v1alpha2"),
	"BackendTLSPolicy": gw("BackendTLSPolicy", true, func() any { return &gatewayv1.BackendTLSPolicy{} }, "v1alpha3"),
	"ListenerSet":      gw("ListenerSet", true, func() any { return &gatewayv1.ListenerSet{} }),
	"Namespace":        core("", "Namespace", false, func() any { return &corev1.Namespace{} }),
	"Service":          core("", "Service", true, func() any { return &corev1.Service{} }),
	"Secret":           core("", "Secret", true, func() any { return &corev1.Secret{} }),
	"ConfigMap":        core("", "ConfigMap", true, func() any { return &corev1.ConfigMap{} }),
	"EndpointSlice":    core(discoveryv1.GroupName, "EndpointSlice", true, func() any { return &discoveryv1.EndpointSlice{} }),
}

func gw(kind string, namespaced bool, newObject func() any, older ...string) Kind {
	return Kind{
		Group: gatewayGroup, Version: "v1", Kind: kind, Namespaced: namespaced,
		accepts: append([]string{"v1"}, older...), newObject: newObject,
	}
}

func core(group, kind string, namespaced bool, newObject func() any) Kind {
	return Kind{
		Group: group, Version: "v1", Kind: kind, Namespaced: namespaced,
		accepts: []string{"v1"}, newObject: newObject,
	}
}

// Kinds returns the kinds the provider publishes, sorted by name. The caller
// owns the returned slice.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// LookupKind returns the Kind of the given name.
func LookupKind(kind string) (Kind, bool) {
	k, ok := kinds[kind]
	return k, ok
}

// kindNames is the sorted list of kind names, for error messages.
func kindNames() []string {
	out := make([]string, 0, len(kinds))
	for _, k := range Kinds() {
		out = append(out, k.Kind)
	}
	return out
}
