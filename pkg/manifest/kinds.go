package manifest

import (
	"slices"
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

	// accepts lists the versions a file may use, Version included: for a
	// Gateway API kind, exactly the versions its CustomResourceDefinition
	// serves (gatewayCRDs); v1 for the others.
	accepts []string
	// newObject returns the Go type the object is strictly decoded into.
	newObject func() any
}

// APIVersion is the apiVersion of published objects: "<group>/<version>",
// or "<version>" for the core group.
func (k Kind) APIVersion() string { return k.apiVersion(k.Version) }

func (k Kind) apiVersion(version string) string {
	if k.Group == "" {
		return version
	}
	return k.Group + "/" + version
}

func (k Kind) accepted(version string) bool { return slices.Contains(k.accepts, version) }

// acceptedAPIVersions lists the apiVersions a file may use for the kind.
func (k Kind) acceptedAPIVersions() []string {
	out := make([]string, len(k.accepts))
	for i, v := range k.accepts {
		out[i] = k.apiVersion(v)
	}
	return out
}

// crdKind is what the CustomResourceDefinition of a Gateway API kind says
// of it (see gatewayCRDs, generated from the pinned module's files).
type crdKind struct {
	namespaced bool
	// served lists the versions the API server serves, in the
	// CustomResourceDefinition's order.
	served []string
}

// kinds is every kind the provider publishes, by kind name. Kind names are
// unique across the groups below, which the resources bucket key relies on.
// The Gateway API kinds are those of gatewayCRDs (a test checks it), each
// with its Go type.
var kinds = map[string]Kind{
	"GatewayClass":     gw("GatewayClass", func() any { return &gatewayv1.GatewayClass{} }),
	"Gateway":          gw("Gateway", func() any { return &gatewayv1.Gateway{} }),
	"HTTPRoute":        gw("HTTPRoute", func() any { return &gatewayv1.HTTPRoute{} }),
	"GRPCRoute":        gw("GRPCRoute", func() any { return &gatewayv1.GRPCRoute{} }),
	"TLSRoute":         gw("TLSRoute", func() any { return &gatewayv1.TLSRoute{} }),
	"TCPRoute":         gw("TCPRoute", func() any { return &gatewayv1.TCPRoute{} }),
	"UDPRoute":         gw("UDPRoute", func() any { return &gatewayv1.UDPRoute{} }),
	"ReferenceGrant":   gw("ReferenceGrant", func() any { return &gatewayv1.ReferenceGrant{} }),
	"BackendTLSPolicy": gw("BackendTLSPolicy", func() any { return &gatewayv1.BackendTLSPolicy{} }),
	"ListenerSet":      gw("ListenerSet", func() any { return &gatewayv1.ListenerSet{} }),
	"Namespace":        core("", "Namespace", false, func() any { return &corev1.Namespace{} }),
	"Service":          core("", "Service", true, func() any { return &corev1.Service{} }),
	"Secret":           core("", "Secret", true, func() any { return &corev1.Secret{} }),
	"ConfigMap":        core("", "ConfigMap", true, func() any { return &corev1.ConfigMap{} }),
	"EndpointSlice":    core(discoveryv1.GroupName, "EndpointSlice", true, func() any { return &discoveryv1.EndpointSlice{} }),
}

// gw is a Gateway API kind, published as v1, scoped and served as its
// CustomResourceDefinition says.
func gw(kind string, newObject func() any) Kind {
	crd := gatewayCRDs[kind]
	return Kind{
		Group: gatewayGroup, Version: "v1", Kind: kind, Namespaced: crd.namespaced,
		accepts: crd.served, newObject: newObject,
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
