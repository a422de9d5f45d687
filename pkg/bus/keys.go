package bus

import (
	"fmt"
	"strings"
)

// clusterScoped is the namespace token of cluster-scoped objects.
const clusterScoped = "_"

// escape writes a Kubernetes name as one key token. Kubernetes names hold
// lower-case letters, digits, '-' and '.', never '_', so '.' → '_' is
// reversible.
func escape(name string) string { return strings.ReplaceAll(name, ".", "_") }

func unescape(token string) string { return strings.ReplaceAll(token, "_", ".") }

func namespaceToken(namespace string) string {
	if namespace == "" {
		return clusterScoped
	}
	return escape(namespace)
}

func namespaceFromToken(token string) string {
	if token == clusterScoped {
		return ""
	}
	return unescape(token)
}

// ResourceKey is the key of an object in the resources bucket:
// <Kind>.<namespace or _>.<name>.
func ResourceKey(kind, namespace, name string) string {
	return kind + "." + namespaceToken(namespace) + "." + escape(name)
}

// ParseResourceKey splits a key made by [ResourceKey].
func ParseResourceKey(key string) (kind, namespace, name string, err error) {
	t := strings.Split(key, ".")
	if len(t) != 3 || t[0] == "" || t[2] == "" {
		return "", "", "", fmt.Errorf("resource key %q: want <Kind>.<namespace or _>.<name>", key)
	}
	return t[0], namespaceFromToken(t[1]), unescape(t[2]), nil
}

// GatewayKey is the key of a gateway's value in the ir, xds and infra buckets:
// <namespace>.<gateway>.
func GatewayKey(namespace, name string) string {
	return escape(namespace) + "." + escape(name)
}

// ParseGatewayKey splits a key made by [GatewayKey].
func ParseGatewayKey(key string) (namespace, name string, err error) {
	t := strings.Split(key, ".")
	if len(t) != 2 || t[0] == "" || t[1] == "" {
		return "", "", fmt.Errorf("gateway key %q: want <namespace>.<gateway>", key)
	}
	return unescape(t[0]), unescape(t[1]), nil
}

// StatusKey is the key of an object's status for one parent gateway:
// <Kind>.<namespace or _>.<name>.<gateway namespace>.<gateway name>.
func StatusKey(kind, namespace, name, gwNamespace, gwName string) string {
	return ResourceKey(kind, namespace, name) + "." + GatewayKey(gwNamespace, gwName)
}

// ParseStatusKey splits a key made by [StatusKey].
func ParseStatusKey(key string) (kind, namespace, name, gwNamespace, gwName string, err error) {
	t := strings.Split(key, ".")
	if len(t) != 5 {
		return "", "", "", "", "", fmt.Errorf("status key %q: want <Kind>.<namespace>.<name>.<gateway namespace>.<gateway>", key)
	}
	return t[0], namespaceFromToken(t[1]), unescape(t[2]), unescape(t[3]), unescape(t[4]), nil
}

// MemberKey is the key of a translator replica in the members bucket.
func MemberKey(id string) string { return "translator." + escape(id) }

// DataPlane is the gateway-namespace token of status entries written by the
// xds service rather than the translator: what the Envoys of a gateway said
// about its configuration (a rejected version, for example). Kubernetes names
// never hold '=', so these keys never collide with a translator's.
const DataPlane = "=xds"

// DataPlaneStatusKey is the key of the xds service's status entry for a
// Gateway: Gateway.<namespace>.<name>.=xds.<replica>, one per xds replica.
func DataPlaneStatusKey(namespace, name, replica string) string {
	return ResourceKey("Gateway", namespace, name) + "." + DataPlane + "." + escape(replica)
}

// Infrastructure is the gateway-namespace token of status entries written by
// the infra service: the addresses of a Gateway's proxies, under
// Gateway.<namespace>.<name>.=infra.=infra.
const Infrastructure = "=infra"

// SyncKind is the kind token of the providers' sync marks
// (busv1.SyncMark) in the resources bucket: Sync._.<source>. No
// Kubernetes kind is named Sync.
const SyncKind = "Sync"

// SyncKey is the key of the sync mark of a provider source ("file",
// "kubernetes") in the resources bucket.
func SyncKey(source string) string { return ResourceKey(SyncKind, "", source) }
