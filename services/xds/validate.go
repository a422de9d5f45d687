package xds

import (
	"errors"
	"fmt"

	// The Envoy types a snapshot may hold, registered so that their Anys
	// decode (gatewire tap imports this package for that). The typed
	// config inside them (the connection manager, the router) is passed
	// to Envoy as it came.
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// hcmType is the type URL of the HTTP connection manager.
const hcmType = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"

// refs is what one resource of the bucket names, for the consistency
// check of the snapshot it is part of.
type refs struct {
	kind xdsbucket.Kind
	name string
	// routes are the route configurations a listener takes over RDS.
	routes []string
	// endpoints is the ClusterLoadAssignment an EDS cluster needs.
	endpoints string
	// clusters are the clusters a virtual host's routes send to.
	clusters []string
}

// checker validates each resource of the bucket once, when it changes,
// and keeps what it names, so that a snapshot's consistency is checked
// without decoding it again. It is used by the feed's goroutine only.
type checker struct {
	refs map[string]*gatewayRefs // by gateway key
	// gateway and suffix are those of the entry the feed applies now.
	gateway, suffix string
}

func newChecker() *checker { return &checker{refs: map[string]*gatewayRefs{}} }

// entry tells the checker which key the next validation is of, and
// forgets what it held under that key: a refused or deleted value names
// nothing.
func (c *checker) entry(gateway, suffix string) {
	c.gateway, c.suffix = gateway, suffix
	if g := c.refs[gateway]; g != nil {
		g.set(suffix, nil)
		if len(g.bySuffix) == 0 {
			delete(c.refs, gateway)
		}
	}
}

// validate is the stage's Validate: it decodes r into its Envoy type,
// runs ValidateAll, checks that the resource is named as its key says,
// and records what it names.
func (c *checker) validate(r *busv1.XdsResource) error {
	k, err := xdsbucket.KindOf(r)
	if err != nil {
		return err
	}
	got, err := decodeResource(k, r.GetValue())
	if err != nil {
		return err
	}
	if got.name != r.GetName() {
		return fmt.Errorf("the value is named %q", got.name)
	}
	g := c.refs[c.gateway]
	if g == nil {
		g = newGatewayRefs()
		c.refs[c.gateway] = g
	}
	g.set(c.suffix, got)
	return nil
}

// decodeResource decodes and checks one value of kind k.
func decodeResource(k xdsbucket.Kind, value []byte) (*refs, error) {
	out := &refs{kind: k}
	var msg interface {
		proto.Message
		ValidateAll() error
	}
	switch k {
	case xdsbucket.KindListener, xdsbucket.KindAPIListener:
		msg = &listener.Listener{}
	case xdsbucket.KindRoute:
		msg = &route.RouteConfiguration{}
	case xdsbucket.KindVirtualHost:
		msg = &route.VirtualHost{}
	case xdsbucket.KindCluster:
		msg = &cluster.Cluster{}
	case xdsbucket.KindEndpoint:
		msg = &endpoint.ClusterLoadAssignment{}
	case xdsbucket.KindSecret:
		msg = &tls.Secret{}
	default:
		return nil, fmt.Errorf("kind %q is not served", k)
	}
	if err := proto.Unmarshal(value, msg); err != nil {
		return nil, err
	}
	if err := msg.ValidateAll(); err != nil {
		return nil, err
	}
	var err error
	switch m := msg.(type) {
	case *listener.Listener:
		out.name = m.GetName()
		if k == xdsbucket.KindAPIListener {
			out.routes, err = apiListenerRoutes(m)
		} else {
			out.routes, err = listenerRoutes(m)
		}
	case *route.RouteConfiguration:
		out.name = m.GetName()
	case *route.VirtualHost:
		out.name = m.GetName()
		out.clusters = routeClusters(m)
	case *cluster.Cluster:
		out.name = m.GetName()
		if m.GetType() == cluster.Cluster_EDS {
			out.endpoints = m.GetEdsClusterConfig().GetServiceName()
			if out.endpoints == "" {
				out.endpoints = m.GetName()
			}
		}
	case *endpoint.ClusterLoadAssignment:
		out.name = m.GetClusterName()
	case *tls.Secret:
		out.name = m.GetName()
	}
	return out, err
}

// listenerRoutes lists the route configurations the HTTP connection
// managers of a listener's filter chains take over RDS.
func listenerRoutes(l *listener.Listener) ([]string, error) {
	var out []string
	chains := l.GetFilterChains()
	if d := l.GetDefaultFilterChain(); d != nil {
		chains = append(chains[:len(chains):len(chains)], d)
	}
	for _, fc := range chains {
		for _, f := range fc.GetFilters() {
			if f.GetTypedConfig().GetTypeUrl() != hcmType {
				continue
			}
			m, err := connectionManager(f.GetTypedConfig())
			if err != nil {
				return nil, fmt.Errorf("filter %q: %w", f.GetName(), err)
			}
			if name := m.GetRds().GetRouteConfigName(); name != "" {
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// apiListenerRoutes checks that l is an API listener whose HTTP connection
// manager's routes are inline or over RDS, and returns those over RDS.
func apiListenerRoutes(l *listener.Listener) ([]string, error) {
	a := l.GetApiListener().GetApiListener()
	if a == nil {
		return nil, errors.New("not an api_listener")
	}
	m, err := connectionManager(a)
	if err != nil {
		return nil, fmt.Errorf("api_listener: %w", err)
	}
	if m.GetRouteConfig() != nil {
		return nil, nil
	}
	return []string{m.GetRds().GetRouteConfigName()}, nil
}

func connectionManager(a *anypb.Any) (*hcm.HttpConnectionManager, error) {
	m := &hcm.HttpConnectionManager{}
	if err := a.UnmarshalTo(m); err != nil {
		return nil, err
	}
	if err := m.ValidateAll(); err != nil {
		return nil, err
	}
	return m, nil
}

// routeClusters lists the clusters a virtual host's routes send to.
func routeClusters(vh *route.VirtualHost) []string {
	var out []string
	for _, r := range vh.GetRoutes() {
		a := r.GetRoute()
		if c := a.GetCluster(); c != "" {
			out = append(out, c)
		}
		for _, w := range a.GetWeightedClusters().GetClusters() {
			out = append(out, w.GetName())
		}
	}
	return out
}

func listenerKind(k xdsbucket.Kind) string {
	if k == xdsbucket.KindAPIListener {
		return "proxyless listener"
	}
	return "listener"
}
