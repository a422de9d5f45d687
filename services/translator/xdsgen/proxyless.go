package xdsgen

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// ProxylessListeners returns the API listeners that proxyless gRPC clients
// of the gateway are served instead of the Envoy listeners, sorted by name,
// given res, the gateway's [Resources].
//
// A gRPC client that dials "xds:///<hostname>" asks for the listener named
// exactly "<hostname>" and picks, in that listener's routes, the virtual
// host whose domain matches "<hostname>". So there is one API listener per
// exact hostname of the gateway's virtual hosts, named like the hostname
// with no port, whose connection manager takes its routes over ADS from the
// RouteConfiguration of the IR listener that holds the virtual host: the
// same RouteConfiguration, clusters and endpoints Envoy is served. The
// connection manager holds only the router filter (gRPC requires it, and
// NACKs HTTP filters it does not know).
//
// A hostname served on several ports (one IR listener per port) gets the
// listener of the lowest port whose RouteConfiguration is in res; an IR
// listener without one (Envoy does not serve it) is skipped. Wildcard
// virtual hosts ("*", "*.example.com") get no API listener: a gRPC client
// asks for the listener of the one name it dials, and only exact names are
// known in advance.
func ProxylessListeners(gw *irv1.Gateway, res map[resourcev3.Type][]types.Resource) ([]*listenerv3.Listener, error) {
	as, err := apiListeners(gw, routeConfigNames(res))
	if err != nil {
		return nil, err
	}
	out := make([]*listenerv3.Listener, len(as))
	for i, a := range as {
		out[i] = a.listener
	}
	return out, nil
}

// routeConfigNames is the set of the names of the RouteConfigurations in
// res.
func routeConfigNames(res map[resourcev3.Type][]types.Resource) map[string]bool {
	names := make(map[string]bool, len(res[resourcev3.RouteType]))
	for _, r := range res[resourcev3.RouteType] {
		names[cachev3.GetResourceName(r)] = true
	}
	return names
}

// routedListener is an API listener and the RouteConfiguration it names.
type routedListener struct {
	listener    *listenerv3.Listener
	routeConfig string
}

// apiListeners returns the [ProxylessListeners] of gw, sorted by name,
// each with the RouteConfiguration it names, one of routeConfigs.
func apiListeners(gw *irv1.Gateway, routeConfigs map[string]bool) ([]routedListener, error) {
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return nil, fmt.Errorf("proxyless listeners: router filter: %w", err)
	}
	seen := map[string]bool{}
	var out []routedListener
	for _, l := range gw.GetListeners() { // sorted by port
		if !routeConfigs[l.GetName()] {
			continue
		}
		for _, vh := range l.GetVirtualHosts() {
			host := vh.GetHostname()
			if host == "" || strings.Contains(host, "*") || seen[host] {
				continue
			}
			seen[host] = true
			lis, err := apiListener(host, l.GetName(), router)
			if err != nil {
				return nil, err
			}
			out = append(out, routedListener{listener: lis, routeConfig: l.GetName()})
		}
	}
	slices.SortFunc(out, func(a, b routedListener) int { return cmp.Compare(a.listener.GetName(), b.listener.GetName()) })
	return out, nil
}

// apiListener is the API listener named host whose routes are the
// RouteConfiguration routeConfig.
func apiListener(host, routeConfig string, router *anypb.Any) (*listenerv3.Listener, error) {
	manager := &hcmv3.HttpConnectionManager{
		StatPrefix: host,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: routeConfig,
		}},
		HttpFilters: []*hcmv3.HttpFilter{{
			Name:       "envoy.filters.http.router",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
	}
	if err := manager.ValidateAll(); err != nil {
		return nil, fmt.Errorf("%w: proxyless listener %s: http connection manager: %v", ErrInvalid, host, err)
	}
	a, err := anypb.New(manager)
	if err != nil {
		return nil, fmt.Errorf("proxyless listener %s: http connection manager: %w", host, err)
	}
	return &listenerv3.Listener{Name: host, ApiListener: &listenerv3.ApiListener{ApiListener: a}}, nil
}

// packWithProxyless packs the gateway's resources (see [Snapshot]) and its
// [ProxylessListeners], and stamps the snapshot's versions. Every API
// listener must pass ValidateAll.
func packWithProxyless(gw *irv1.Gateway, res map[resourcev3.Type][]types.Resource) (*busv1.XdsSnapshot, error) {
	routeConfigs := routeConfigNames(res)
	listeners, err := apiListeners(gw, routeConfigs)
	if err != nil {
		return nil, err
	}
	if err := validateProxyless(listeners, routeConfigs); err != nil {
		return nil, err
	}
	snap, err := pack(NodeCluster(gw), res)
	if err != nil {
		return nil, err
	}
	opts := proto.MarshalOptions{Deterministic: true}
	for _, l := range listeners {
		a := &anypb.Any{}
		if err := anypb.MarshalFrom(a, l.listener, opts); err != nil {
			return nil, fmt.Errorf("%w: marshal proxyless listener %s: %v", ErrInvalid, l.listener.GetName(), err)
		}
		snap.ProxylessListeners = append(snap.ProxylessListeners, a)
	}
	if err := stamp(snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// validateProxyless checks every API listener with ValidateAll, and that
// the RouteConfiguration it names is one of routeConfigs.
func validateProxyless(listeners []routedListener, routeConfigs map[string]bool) error {
	for _, l := range listeners {
		name := l.listener.GetName()
		if err := l.listener.ValidateAll(); err != nil {
			return fmt.Errorf("%w: proxyless listener %s: %v", ErrInvalid, name, err)
		}
		if !routeConfigs[l.routeConfig] {
			return fmt.Errorf("%w: proxyless listener %s names route configuration %q, which does not exist", ErrInvalid, name, l.routeConfig)
		}
	}
	return nil
}
