package xds

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/anypb"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// decodeProxyless builds the snapshot of a gateway's proxyless gRPC
// clients: its API listeners (proxyless_listeners) instead of the Envoy
// listeners, and the routes, clusters and endpoints of envoy, the
// gateway's Envoy snapshot decoded from the same value, at the same
// versions (the listeners' version is a hash of them when the Envoy
// snapshot has type versions). It holds no secrets: gRPC clients do not ask for them, and the
// private keys of the gateway's listeners are for its Envoys only. Every API listener must decode, pass ValidateAll, have a unique
// name, and be an api_listener whose connection manager takes its routes
// inline or from a RouteConfiguration of the snapshot. (go-control-plane's
// Consistent does not look into API listeners.)
func decodeProxyless(x *busv1.XdsSnapshot, envoy *cache.Snapshot) (*cache.Snapshot, error) {
	listeners, err := decodeTyped(&busv1.TypedResources{TypeUrl: resource.ListenerType, Resources: x.GetProxylessListeners()})
	if err != nil {
		return nil, fmt.Errorf("proxyless listeners: %w", err)
	}
	routes := envoy.GetResources(resource.RouteType)
	for _, l := range listeners {
		if err := checkAPIListener(l.(*listener.Listener), routes); err != nil {
			return nil, fmt.Errorf("proxyless listener %q: %w", cache.GetResourceName(l), err)
		}
	}
	snap, err := cache.NewSnapshot(x.GetVersion(), map[resource.Type][]types.Resource{
		resource.ListenerType: listeners,
		resource.SecretType:   {},
	})
	if err != nil {
		return nil, err
	}
	// The routes, clusters and endpoints are the Envoy snapshot's, at its
	// versions (the snapshot's version when it has no type versions): its
	// indexes of them are shared, as neither snapshot changes once built.
	for _, t := range []resource.Type{resource.ClusterType, resource.EndpointType, resource.RouteType} {
		i := cache.GetResponseType(t)
		snap.Resources[i] = envoy.Resources[i]
	}
	if !typeVersioned(x) {
		return snap, nil
	}
	// The Envoy snapshot has type versions: the listeners are versioned by
	// what they hold.
	snap.Resources[cache.GetResponseType(resource.SecretType)].Version = emptyVersion
	snap.Resources[cache.GetResponseType(resource.ListenerType)].Version = listenersVersion(x.GetProxylessListeners())
	return snap, nil
}

// listenersVersion is a hash of the proxyless listeners as marshalled.
func listenersVersion(listeners []*anypb.Any) string {
	h := sha256.New()
	for _, a := range listeners {
		h.Write(binary.AppendUvarint(nil, uint64(len(a.GetValue()))))
		h.Write(a.GetValue())
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// checkAPIListener checks that l is an API listener whose HTTP connection
// manager's routes are inline or among routes.
func checkAPIListener(l *listener.Listener, routes map[string]types.Resource) error {
	a := l.GetApiListener().GetApiListener()
	if a == nil {
		return fmt.Errorf("not an api_listener")
	}
	m := &hcm.HttpConnectionManager{}
	if err := a.UnmarshalTo(m); err != nil {
		return fmt.Errorf("api_listener: %w", err)
	}
	if err := m.ValidateAll(); err != nil {
		return fmt.Errorf("api_listener: %w", err)
	}
	if m.GetRouteConfig() != nil {
		return nil
	}
	name := m.GetRds().GetRouteConfigName()
	if _, ok := routes[name]; !ok {
		return fmt.Errorf("names route configuration %q, which the snapshot does not hold", name)
	}
	return nil
}
