package xdsgen

import (
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// addL4Resources adds to out what listeners need besides their routes and
// backends: the SDS secrets of their certificates and the weighted clusters
// of UDP listeners.
func addL4Resources(gw *irv1.Gateway, out map[resourcev3.Type][]types.Resource) {
	for _, s := range gw.GetSecrets() {
		out[resourcev3.SecretType] = append(out[resourcev3.SecretType], Secret(s))
	}
	for _, l := range gw.GetListeners() {
		if c := UDPWeightedCluster(l); c != nil {
			out[resourcev3.ClusterType] = append(out[resourcev3.ClusterType], c)
		}
	}
	for _, cla := range CombinedLoadAssignments(gw) {
		out[resourcev3.EndpointType] = append(out[resourcev3.EndpointType], cla)
	}
}

// CombinedLoadAssignments returns the load assignments of gw's snapshot
// that hold the endpoints of several backends (those of weighted UDP
// clusters), computed from the endpoints gw's backends have. Like a
// backend's own [LoadAssignment], they change when endpoints do: whoever
// replaces the load assignments of changed backends must replace these too.
func CombinedLoadAssignments(gw *irv1.Gateway) []*endpointv3.ClusterLoadAssignment {
	var backends map[string]*irv1.Backend
	var out []*endpointv3.ClusterLoadAssignment
	for _, l := range gw.GetListeners() {
		if !udpWeighted(l) {
			continue
		}
		if backends == nil {
			backends = make(map[string]*irv1.Backend, len(gw.GetBackends()))
			for _, b := range gw.GetBackends() {
				backends[b.GetName()] = b
			}
		}
		out = append(out, UDPWeightedLoadAssignment(l, backends))
	}
	return out
}

// listenerRefsExist checks what Consistent does not: that every SDS secret
// a listener or a cluster uses and every cluster a TCP or UDP proxy names
// is in the snapshot ([InvalidBackendCluster] excepted).
func listenerRefsExist(res map[resourcev3.Type][]types.Resource) error {
	have := map[string]bool{}
	for _, t := range []resourcev3.Type{resourcev3.ClusterType, resourcev3.SecretType} {
		for _, r := range res[t] {
			have[t+"/"+cachev3.GetResourceName(r)] = true
		}
	}
	have[resourcev3.ClusterType+"/"+InvalidBackendCluster] = true
	for _, r := range res[resourcev3.ListenerType] {
		l := r.(*listenerv3.Listener)
		for _, ref := range listenerRefs(l) {
			if !have[ref.typ+"/"+ref.name] {
				return fmt.Errorf("%w: listener %s names %s %s, which does not exist", ErrInvalid, l.GetName(), shortType(ref.typ), ref.name)
			}
		}
	}
	for _, r := range res[resourcev3.ClusterType] {
		c := r.(*clusterv3.Cluster)
		tls := &tlsv3.UpstreamTlsContext{}
		if !typedAs(c.GetTransportSocket().GetTypedConfig(), tls) {
			continue
		}
		for _, sds := range tls.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs() {
			if !have[resourcev3.SecretType+"/"+sds.GetName()] {
				return fmt.Errorf("%w: cluster %s names Secret %s, which does not exist", ErrInvalid, c.GetName(), sds.GetName())
			}
		}
	}
	return nil
}

type listenerRef struct{ typ, name string }

// listenerRefs returns the clusters and secrets a listener names in its
// TCP proxies, UDP proxies and downstream TLS contexts.
func listenerRefs(l *listenerv3.Listener) []listenerRef {
	var out []listenerRef
	for _, f := range l.GetListenerFilters() {
		cfg := &udpproxyv3.UdpProxyConfig{}
		if typedAs(f.GetTypedConfig(), cfg) {
			route := &udpproxyv3.Route{}
			if typedAs(cfg.GetMatcher().GetOnNoMatch().GetAction().GetTypedConfig(), route) {
				out = append(out, listenerRef{resourcev3.ClusterType, route.GetCluster()})
			}
		}
	}
	for _, chain := range l.GetFilterChains() {
		tls := &tlsv3.DownstreamTlsContext{}
		if typedAs(chain.GetTransportSocket().GetTypedConfig(), tls) {
			for _, sds := range tls.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs() {
				out = append(out, listenerRef{resourcev3.SecretType, sds.GetName()})
			}
		}
		for _, f := range chain.GetFilters() {
			proxy := &tcpproxyv3.TcpProxy{}
			if !typedAs(f.GetTypedConfig(), proxy) {
				continue
			}
			if c := proxy.GetCluster(); c != "" {
				out = append(out, listenerRef{resourcev3.ClusterType, c})
			}
			for _, w := range proxy.GetWeightedClusters().GetClusters() {
				out = append(out, listenerRef{resourcev3.ClusterType, w.GetName()})
			}
		}
	}
	return out
}

// typedAs unmarshals a into m when a holds a message of m's type.
func typedAs(a *anypb.Any, m proto.Message) bool {
	if a == nil || !a.MessageIs(m) {
		return false
	}
	return a.UnmarshalTo(m) == nil
}
