package xdsbucket

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Type URLs of the resources a gateway's snapshot holds.
const (
	ListenerType    = "type.googleapis.com/envoy.config.listener.v3.Listener"
	RouteType       = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	VirtualHostType = "type.googleapis.com/envoy.config.route.v3.VirtualHost"
	ClusterType     = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	EndpointType    = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	SecretType      = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
)

// Kind is the kind token of a resource key.
type Kind string

// The kinds of resource keys.
const (
	KindListener    Kind = "lds"
	KindRoute       Kind = "rds"
	KindVirtualHost Kind = "vh"
	KindCluster     Kind = "cds"
	KindEndpoint    Kind = "eds"
	KindSecret      Kind = "sds"
	KindAPIListener Kind = "api"
)

var kindsByType = map[string]Kind{
	ListenerType:    KindListener,
	RouteType:       KindRoute,
	VirtualHostType: KindVirtualHost,
	ClusterType:     KindCluster,
	EndpointType:    KindEndpoint,
	SecretType:      KindSecret,
}

// ErrKey is returned for a key or resource that does not follow the layout.
var ErrKey = errors.New("xdsbucket: not a key of the xds bucket")

// KindOf is the kind of a resource: by its type URL, with API listeners
// (proxyless) apart from Envoy listeners.
func KindOf(r *busv1.XdsResource) (Kind, error) {
	k, ok := kindsByType[r.GetTypeUrl()]
	switch {
	case !ok:
		return "", fmt.Errorf("%w: resource %q has type %q", ErrKey, r.GetName(), r.GetTypeUrl())
	case r.GetProxyless() && k != KindListener:
		return "", fmt.Errorf("%w: proxyless resource %q is a %s, want a listener", ErrKey, r.GetName(), r.GetTypeUrl())
	case r.GetProxyless():
		return KindAPIListener, nil
	case k == KindVirtualHost && r.GetRouteConfiguration() == "":
		return "", fmt.Errorf("%w: virtual host %q names no route configuration", ErrKey, r.GetName())
	}
	return k, nil
}

// TypeOf is the snapshot type a kind counts in: virtual hosts count with
// route configurations, API listeners with the proxyless listeners.
func TypeOf(k Kind) string {
	switch k {
	case KindVirtualHost, KindRoute:
		return RouteType
	case KindAPIListener, KindListener:
		return ListenerType
	case KindCluster:
		return ClusterType
	case KindEndpoint:
		return EndpointType
	case KindSecret:
		return SecretType
	}
	return ""
}

// ResourceKey is the key of r among the keys of the gateway whose commit
// is under gatewayKey (bus.GatewayKey).
func ResourceKey(gatewayKey string, r *busv1.XdsResource) (string, error) {
	k, err := KindOf(r)
	if err != nil {
		return "", err
	}
	return gatewayKey + "." + Suffix(k, r), nil
}

// Suffix is "<kind>.<name>", the part of a resource key after the gateway.
func Suffix(k Kind, r *busv1.XdsResource) string {
	name := r.GetName()
	if k == KindVirtualHost {
		name = r.GetRouteConfiguration() + "/" + name
	}
	return string(k) + "." + base64.RawURLEncoding.EncodeToString([]byte(name))
}

// ParseKey splits a key of the bucket into the key of its gateway's commit
// and, for a resource, the suffix "<kind>.<name>" ("" for a commit).
func ParseKey(key string) (gatewayKey, suffix string, err error) {
	t := strings.SplitN(key, ".", 4)
	switch {
	case len(t) == 2:
		if _, _, err := bus.ParseGatewayKey(key); err != nil {
			return "", "", err
		}
		return key, "", nil
	case len(t) == 4 && t[0] != "" && t[1] != "" && t[3] != "":
		if _, err := base64.RawURLEncoding.DecodeString(t[3]); err != nil {
			return "", "", fmt.Errorf("%w: %q: name %q is not base64url", ErrKey, key, t[3])
		}
		if _, ok := typeOfToken(t[2]); !ok {
			return "", "", fmt.Errorf("%w: %q: unknown kind %q", ErrKey, key, t[2])
		}
		return t[0] + "." + t[1], t[2] + "." + t[3], nil
	}
	return "", "", fmt.Errorf("%w: %q: want <namespace>.<gateway>[.<kind>.<name>]", ErrKey, key)
}

func typeOfToken(token string) (string, bool) {
	t := TypeOf(Kind(token))
	return t, t != ""
}

// GatewayPattern is the key pattern of everything a gateway has in the
// bucket, its commit aside: <gatewayKey>.>.
func GatewayPattern(gatewayKey string) string { return gatewayKey + ".>" }
