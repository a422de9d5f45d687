package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Labels and annotations on every object this package makes.
const (
	// LabelManagedBy is app.kubernetes.io/managed-by; its value is ManagedBy.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy marks the objects of gatewire's infra service.
	ManagedBy = "gatewire"
	// LabelName is app.kubernetes.io/name; its value is AppName.
	LabelName = "app.kubernetes.io/name"
	// AppName is what runs in the pods: Envoy, provisioned by gatewire.
	AppName = "gatewire-envoy"
	// LabelComponent is app.kubernetes.io/component; its value is "proxy".
	LabelComponent = "app.kubernetes.io/component"
	// LabelSystem holds the installation (the bus system name), so that
	// several installations in one cluster prune only their own objects.
	LabelSystem = "gateway.gatewire.dev/system"
	// LabelGatewayNamespace holds the namespace of the Gateway.
	LabelGatewayNamespace = "gateway.gatewire.dev/namespace"
	// LabelGatewayName holds the name of the Gateway, or for a name longer
	// than a label value allows, its first 54 characters and a hash (see
	// LabelValue).
	LabelGatewayName = "gateway.gatewire.dev/name"
	// LabelGatewayAPIName is the Gateway API's well-known label
	// (gateway.networking.k8s.io/gateway-name, GEP-1762) that every object
	// made for a Gateway carries, with the value of LabelGatewayName. It is
	// not in the pods' selector, which cannot change.
	LabelGatewayAPIName = "gateway.networking.k8s.io/gateway-name"
	// AnnotationGateway holds <namespace>/<name> of the Gateway, exactly: the
	// authority on which gateway an object belongs to.
	AnnotationGateway = "gateway.gatewire.dev/gateway"
	// AnnotationBootstrapHash, on the pod template, is a hash of the
	// bootstrap, so that a changed bootstrap rolls the pods (Envoy reads its
	// bootstrap only when it starts).
	AnnotationBootstrapHash = "gateway.gatewire.dev/bootstrap-hash"

	// FieldManager is the server-side apply field manager of every write.
	FieldManager = "gatewire-infra"
	// BootstrapKey is the key of the bootstrap in the ConfigMap.
	BootstrapKey = "bootstrap.yaml"

	// namePrefix starts every object name.
	namePrefix = "gatewire-"
	// maxName is the longest object name: a Service name is a DNS label.
	maxName = 63
	// hashLength is the number of hex digits of the hash in shortened names.
	hashLength = 8
)

// gatewayHash is a short hash of a gateway's identity.
func gatewayHash(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	return hex.EncodeToString(sum[:])[:hashLength]
}

// ObjectName is the name of the four objects of a gateway.
//
// In the Gateway's own namespace (shared false) it is gatewire-<gateway>. In
// a namespace shared by the gateways of every namespace it is
// gatewire-<namespace>-<gateway>-<hash>, the hash telling apart the gateways
// whose names would otherwise meet ("a-b"/"c" and "a"/"b-c"). A name that is
// not a DNS label (too long, or with dots, which Gateway names may hold and
// Service names may not) has its dots turned into dashes, is cut, and ends
// with the hash.
func ObjectName(namespace, name string, shared bool) string {
	base := namePrefix + name
	if shared {
		base = namePrefix + namespace + "-" + name
	} else if len(base) <= maxName && !strings.Contains(base, ".") {
		return base
	}
	base = strings.ReplaceAll(base, ".", "-")
	if limit := maxName - hashLength - 1; len(base) > limit {
		base = strings.TrimRight(base[:limit], "-")
	}
	return base + "-" + gatewayHash(namespace, name)
}

// LabelValue is name as a label value: name itself when it fits in 63
// characters, else its first 54 characters and a hash of the gateway.
func LabelValue(namespace, name string) string {
	if len(name) <= maxName {
		return name
	}
	base := strings.TrimRight(name[:maxName-hashLength-1], "-.")
	return base + "-" + gatewayHash(namespace, name)
}

// gatewayOf reads the gateway an object belongs to from its annotations.
func gatewayOf(annotations map[string]string) (namespace, name string, err error) {
	v, ok := annotations[AnnotationGateway]
	if !ok {
		return "", "", fmt.Errorf("no annotation %s", AnnotationGateway)
	}
	namespace, name, ok = strings.Cut(v, "/")
	if !ok || namespace == "" || name == "" {
		return "", "", fmt.Errorf("annotation %s=%q: want <namespace>/<name>", AnnotationGateway, v)
	}
	return namespace, name, nil
}

// selectorLabels select the pods of a gateway; they never change, as a
// Deployment's selector cannot.
func selectorLabels(namespace, name string) map[string]string {
	return map[string]string{
		LabelName:             AppName,
		LabelGatewayNamespace: namespace,
		LabelGatewayName:      LabelValue(namespace, name),
	}
}

// objectLabels are the labels of every object of a gateway and of its pods.
func objectLabels(system, namespace, name string) map[string]string {
	l := selectorLabels(namespace, name)
	l[LabelManagedBy] = ManagedBy
	l[LabelComponent] = "proxy"
	l[LabelSystem] = system
	l[LabelGatewayAPIName] = l[LabelGatewayName]
	return l
}

// ownedSelector selects every object of this package in one installation.
func ownedSelector(system string) string {
	return LabelManagedBy + "=" + ManagedBy + "," + LabelSystem + "=" + system
}
