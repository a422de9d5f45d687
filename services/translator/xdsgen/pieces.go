package xdsgen

import (
	"crypto/sha256"
	"fmt"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// newPiece checks one resource and encodes it.
func newPiece(typeURL string, m proto.Message, name string, fill func(*busv1.XdsResource)) (*piece, error) {
	if err := validateOne(typeURL, m); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrInvalid, shortType(typeURL), name, err)
	}
	return encodePiece(typeURL, m, name, fill)
}

// encodePiece encodes one resource that its caller has checked with
// ValidateAll (to say more of what fails than newPiece would).
func encodePiece(typeURL string, m proto.Message, name string, fill func(*busv1.XdsResource)) (*piece, error) {
	value, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: marshal %s %s: %v", ErrInvalid, shortType(typeURL), name, err)
	}
	return pieceOf(typeURL, value, name, fill)
}

// pieceOf is the piece of one encoded resource.
func pieceOf(typeURL string, value []byte, name string, fill func(*busv1.XdsResource)) (*piece, error) {
	r := &busv1.XdsResource{TypeUrl: typeURL, Name: name, Value: value, Version: xdsbucket.Version(value)}
	if fill != nil {
		fill(r)
	}
	k, err := xdsbucket.KindOf(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return &piece{suffix: xdsbucket.Suffix(k, r), res: r}, nil
}

func validateOne(typeURL string, m proto.Message) error {
	v, ok := m.(validatable)
	if !ok {
		return fmt.Errorf("%s has no validation", typeURL)
	}
	return v.ValidateAll()
}

// listener returns the pieces of an IR listener: its Envoy listener and,
// when it serves HTTP, the shell of its route configuration.
func (b *Builder) listener(l *irv1.Listener) (*listenerPiece, error) {
	h, err := listenerHash(l, b.listenerCORS(l))
	if err != nil {
		return nil, err
	}
	if lp := b.listeners[l.GetName()]; lp != nil && lp.hash == h {
		return lp, nil
	}
	lis, err := Listener(l)
	if err != nil {
		return nil, err
	}
	lp := &listenerPiece{hash: h}
	if lis != nil {
		if lp.listener, err = newPiece(resourcev3.ListenerType, lis, lis.GetName(), nil); err != nil {
			return nil, err
		}
		for _, r := range listenerRefs(lis) {
			lp.listener.refs = append(lp.listener.refs, ref(r))
		}
		if ServesHTTP(l) {
			lp.listener.refs = append(lp.listener.refs, ref{resourcev3.RouteType, l.GetName()})
			shell := &routev3.RouteConfiguration{Name: l.GetName(), IgnorePortInHostMatching: true}
			if lp.shell, err = newPiece(resourcev3.RouteType, shell, l.GetName(), nil); err != nil {
				return nil, err
			}
		}
	}
	b.listeners[l.GetName()] = lp
	return lp, nil
}

// listenerHash is a hash of what the Envoy listener of an IR listener is
// made of: the IR listener without its virtual hosts, and whether one of
// their routes has a CORS policy (cors: the listener then has the CORS
// filter).
func listenerHash(l *irv1.Listener, cors bool) ([sha256.Size]byte, error) {
	bare := &irv1.Listener{Name: l.GetName(), Port: l.GetPort(), Protocol: l.GetProtocol(),
		GatewayListeners: l.GetGatewayListeners(), Tls: l.GetTls(), TlsRoutes: l.GetTlsRoutes(), L4Routes: l.GetL4Routes()}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(bare)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("%w: listener %s: %v", ErrInvalid, l.GetName(), err)
	}
	if cors {
		data = append(data, "cors"...)
	}
	return sha256.Sum256(data), nil
}

// encodeVhost returns the piece of one virtual host of listener l's route
// configuration.
func encodeVhost(vh *irv1.VirtualHost, l *irv1.Listener) (*piece, error) {
	fill := func(r *busv1.XdsResource) {
		r.RouteConfiguration, r.Order = l.GetName(), xdsbucket.VirtualHostOrder(vh.GetName())
	}
	if v, refs, ok := vhostWire(vh); ok {
		p, err := pieceOf(xdsbucket.VirtualHostType, v, vh.GetName(), fill)
		if err != nil {
			return nil, err
		}
		p.refs = refs // simple routes have no CORS policy
		return p, nil
	}
	evh, err := vhostMessage(vh, l)
	if err != nil {
		return nil, err
	}
	p, err := encodePiece(xdsbucket.VirtualHostType, evh, vh.GetName(), fill)
	if err != nil {
		return nil, err
	}
	for _, rt := range evh.GetRoutes() {
		for _, c := range routeClusters(rt.GetRoute()) {
			p.refs = append(p.refs, ref{resourcev3.ClusterType, c})
		}
	}
	if vhostCORS(vh) {
		p.cors = 1
	}
	return p, nil
}

// vhostMessage is the Envoy virtual host of vh on listener l, checked
// with ValidateAll.
func vhostMessage(vh *irv1.VirtualHost, l *irv1.Listener) (*routev3.VirtualHost, error) {
	evh, err := virtualHost(vh, l)
	if err != nil {
		return nil, err
	}
	if err := evh.ValidateAll(); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrInvalid, shortType(resourcev3.RouteType), l.GetName(), narrowHost(evh, err))
	}
	return evh, nil
}

// narrowHost names the route of a virtual host that fails validation,
// which says which Gateway API rule it comes from.
func narrowHost(vh *routev3.VirtualHost, err error) error {
	for _, rt := range vh.GetRoutes() {
		if rerr := rt.ValidateAll(); rerr != nil {
			return fmt.Errorf("virtual host %s, route %s: %w", vh.GetName(), rt.GetName(), rerr)
		}
	}
	return fmt.Errorf("virtual host %s: %w", vh.GetName(), err)
}

// encodeBackend returns the pieces of an IR backend: its cluster and its
// load assignment.
func encodeBackend(be *irv1.Backend) ([2]*piece, error) {
	cp, err := encodeCluster(be)
	if err != nil {
		return [2]*piece{}, err
	}
	var lp *piece
	if v, ok := loadAssignmentWire(be); ok {
		lp, err = pieceOf(resourcev3.EndpointType, v, be.GetName(), nil)
	} else {
		lp, err = newPiece(resourcev3.EndpointType, LoadAssignment(be), be.GetName(), nil)
	}
	if err != nil {
		return [2]*piece{}, err
	}
	return [2]*piece{cp, lp}, nil
}

// encodeCluster is the piece of a backend's cluster.
func encodeCluster(be *irv1.Backend) (*piece, error) {
	if v, ok := clusterWire(be); ok {
		return pieceOf(resourcev3.ClusterType, v, be.GetName(), nil) // no TLS: no secrets
	}
	c, err := Cluster(be)
	if err != nil {
		return nil, err
	}
	cp, err := newPiece(resourcev3.ClusterType, c, c.GetName(), nil)
	if err != nil {
		return nil, err
	}
	for _, s := range clusterSecrets(c) {
		cp.refs = append(cp.refs, ref{resourcev3.SecretType, s})
	}
	return cp, nil
}

func (b *Builder) secret(s *irv1.Secret, next map[*irv1.Secret]*piece) (*piece, error) {
	p := b.secrets[s]
	if p == nil {
		var err error
		if p, err = newPiece(resourcev3.SecretType, Secret(s), s.GetName(), nil); err != nil {
			return nil, err
		}
	}
	next[s] = p
	return p, nil
}

// udpWeightedPieces are the clusters and load assignments that balance
// weighted UDP routes over several backends' endpoints. They are few, and
// built on every Build.
func udpWeightedPieces(gw *irv1.Gateway) ([]*piece, error) {
	var out []*piece
	for _, l := range gw.GetListeners() {
		if c := UDPWeightedCluster(l); c != nil {
			p, err := newPiece(resourcev3.ClusterType, c, c.GetName(), nil)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	for _, cla := range CombinedLoadAssignments(gw) {
		p, err := newPiece(resourcev3.EndpointType, cla, cla.GetClusterName(), nil)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// encodeAPIListener is the piece of the API listener of host, whose routes
// are the route configuration routeConfig.
func encodeAPIListener(host, routeConfig string, tails map[string][]byte) (*piece, error) {
	proxyless := func(r *busv1.XdsResource) { r.Proxyless = true }
	tail, ok := tails[routeConfig]
	if !ok {
		var err error
		if tail, err = managerTail(host, routeConfig); err != nil {
			return nil, err
		}
		tails[routeConfig] = tail
	}
	var p *piece
	var err error
	if v, ok := apiListenerWire(host, tail); ok {
		p, err = pieceOf(resourcev3.ListenerType, v, host, proxyless)
	} else {
		p, err = encodeAPIListenerMessage(host, routeConfig, proxyless)
	}
	if err != nil {
		return nil, err
	}
	p.refs = []ref{{resourcev3.RouteType, routeConfig}}
	return p, nil
}

// encodeAPIListenerMessage encodes the API listener of host through its
// message.
func encodeAPIListenerMessage(host, routeConfig string, fill func(*busv1.XdsResource)) (*piece, error) {
	lis, err := apiListener(host, routeConfig, routerFilter)
	if err != nil {
		return nil, err
	}
	if err := lis.ValidateAll(); err != nil {
		return nil, fmt.Errorf("%w: proxyless listener %s: %v", ErrInvalid, host, err)
	}
	return encodePiece(resourcev3.ListenerType, lis, host, fill)
}

// clusterSecrets are the SDS secrets a cluster presents to its backends.
func clusterSecrets(c *clusterv3.Cluster) []string {
	if c.GetTransportSocket() == nil {
		return nil
	}
	tls := &tlsv3.UpstreamTlsContext{}
	if !typedAs(c.GetTransportSocket().GetTypedConfig(), tls) {
		return nil
	}
	var out []string
	for _, sds := range tls.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs() {
		out = append(out, sds.GetName())
	}
	return out
}

func containsWildcard(host string) bool { return strings.Contains(host, "*") }

// routerFilter is the router filter's config, the only HTTP filter of API
// listeners.
var routerFilter = func() *anypb.Any {
	a, err := anypb.New(&routerv3.Router{})
	if err != nil {
		panic(fmt.Sprintf("xdsgen: router filter: %v", err)) // an empty message always marshals
	}
	return a
}()
