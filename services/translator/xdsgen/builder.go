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

// Builder builds the xDS resources of one gateway from its IR into an
// [xdsbucket.Set], one resource per key, and keeps what it encoded: an IR
// piece it has seen before (the same virtual host, backend or secret, or
// a listener with the same content) is not translated, validated or
// encoded again. The IR is read-only once built, and unchanged pieces keep
// their identity across translations, so an edit of one route encodes one
// virtual host. A Builder is not safe for concurrent use.
type Builder struct {
	set     *xdsbucket.Set
	current map[string]*busv1.XdsResource // by key suffix: what the set holds

	listeners map[string]*listenerPiece // by IR listener name
	vhosts    map[vhostKey]*piece
	backends  map[*irv1.Backend][2]*piece // cluster, load assignment
	secrets   map[*irv1.Secret]*piece
	apis      map[[2]string]*piece // by host and route configuration
	// seen marks what the build in progress uses, to drop the rest.
	seen map[any]bool
}

// piece is one encoded resource and the resources it names.
type piece struct {
	suffix string
	res    *busv1.XdsResource
	refs   []ref
}

type ref struct{ typ, name string }

type listenerPiece struct {
	hash     [sha256.Size]byte
	listener *piece // nil: nothing to serve
	shell    *piece // the route configuration's shell, for HTTP listeners
}

// vhostKey is a virtual host on a listener: what its routes do may depend
// on the listener's port and protocol (a redirect's port and scheme).
type vhostKey struct {
	vh       *irv1.VirtualHost
	port     uint32
	protocol irv1.Protocol
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{
		set: xdsbucket.NewSet(), current: map[string]*busv1.XdsResource{},
		listeners: map[string]*listenerPiece{}, vhosts: map[vhostKey]*piece{},
		backends: map[*irv1.Backend][2]*piece{}, secrets: map[*irv1.Secret]*piece{}, apis: map[[2]string]*piece{},
	}
}

// Build is the result of one [Builder.Build]. Set belongs to the Builder
// and stays valid until its next Build.
type Build struct {
	Set    *xdsbucket.Set
	Commit *busv1.XdsSnapshot
	// Changed and Removed are the key suffixes whose resources are new or
	// changed, and gone, since the previous Build.
	Changed, Removed []string
}

// Build brings the set to the xDS resources of gw, checks them (every
// resource passes ValidateAll, every route configuration a listener uses,
// every cluster a route or listener names and every secret a listener or
// cluster names exists) and returns the set with its commit, versions
// computed, source revision left 0. It fails with an error wrapping
// [ErrInvalid] that names the resource at fault, and then leaves the set
// as it was.
func (b *Builder) Build(gw *irv1.Gateway) (*Build, error) {
	b.seen = map[any]bool{}
	next := make(map[string]*busv1.XdsResource, len(b.current))
	var pieces []*piece
	add := func(p *piece) {
		if p != nil {
			next[p.suffix] = p.res
			pieces = append(pieces, p)
		}
	}
	for _, l := range gw.GetListeners() {
		lp, err := b.listener(l)
		if err != nil {
			return nil, err
		}
		add(lp.listener)
		if lp.listener == nil || !ServesHTTP(l) {
			continue
		}
		add(lp.shell)
		for _, vh := range l.GetVirtualHosts() {
			p, err := b.vhost(vh, l)
			if err != nil {
				return nil, err
			}
			add(p)
		}
	}
	for _, be := range gw.GetBackends() {
		ps, err := b.backend(be)
		if err != nil {
			return nil, err
		}
		add(ps[0])
		add(ps[1])
	}
	for _, s := range gw.GetSecrets() {
		p, err := b.secret(s)
		if err != nil {
			return nil, err
		}
		add(p)
	}
	l4, err := udpWeightedPieces(gw)
	if err != nil {
		return nil, err
	}
	for _, p := range l4 {
		add(p)
	}
	apis, err := b.apiListeners(gw, next)
	if err != nil {
		return nil, err
	}
	for _, p := range apis {
		add(p)
	}
	if err := consistent(pieces); err != nil {
		return nil, err
	}
	return b.commit(gw, next)
}

// commit makes the set hold next, and forgets the pieces the build did not
// use.
func (b *Builder) commit(gw *irv1.Gateway, next map[string]*busv1.XdsResource) (*Build, error) {
	out := &Build{Set: b.set}
	for suffix, r := range next {
		if b.current[suffix] == r {
			continue
		}
		if _, changed, err := b.set.Put(r); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		} else if changed {
			out.Changed = append(out.Changed, suffix)
		}
	}
	for suffix := range b.current {
		if next[suffix] == nil {
			b.set.Delete(suffix)
			out.Removed = append(out.Removed, suffix)
		}
	}
	b.current = next
	for k := range b.vhosts {
		if !b.seen[k] {
			delete(b.vhosts, k)
		}
	}
	for k := range b.backends {
		if !b.seen[k] {
			delete(b.backends, k)
		}
	}
	for k := range b.secrets {
		if !b.seen[k] {
			delete(b.secrets, k)
		}
	}
	for k := range b.apis {
		if !b.seen[k] {
			delete(b.apis, k)
		}
	}
	for k := range b.listeners {
		if !b.seen[k] {
			delete(b.listeners, k)
		}
	}
	out.Commit = b.set.Commit(NodeCluster(gw), 0)
	return out, nil
}

// newPiece encodes and checks one resource.
func newPiece(typeURL string, m proto.Message, name string, fill func(*busv1.XdsResource)) (*piece, error) {
	if err := validateOne(typeURL, m); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrInvalid, shortType(typeURL), name, err)
	}
	value, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: marshal %s %s: %v", ErrInvalid, shortType(typeURL), name, err)
	}
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
	b.seen[l.GetName()] = true
	h, err := listenerHash(l)
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
// their routes has a CORS policy (the listener then has the CORS filter).
func listenerHash(l *irv1.Listener) ([sha256.Size]byte, error) {
	bare := &irv1.Listener{Name: l.GetName(), Port: l.GetPort(), Protocol: l.GetProtocol(),
		GatewayListeners: l.GetGatewayListeners(), Tls: l.GetTls(), TlsRoutes: l.GetTlsRoutes(), L4Routes: l.GetL4Routes()}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(bare)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("%w: listener %s: %v", ErrInvalid, l.GetName(), err)
	}
	if hasCORS(l) {
		data = append(data, "cors"...)
	}
	return sha256.Sum256(data), nil
}

// vhost returns the piece of one virtual host of listener l's route
// configuration.
func (b *Builder) vhost(vh *irv1.VirtualHost, l *irv1.Listener) (*piece, error) {
	k := vhostKey{vh: vh, port: l.GetPort(), protocol: l.GetProtocol()}
	b.seen[k] = true
	if p := b.vhosts[k]; p != nil {
		return p, nil
	}
	routes := make([]*routev3.Route, 0, len(vh.GetRoutes()))
	for _, r := range vh.GetRoutes() {
		rs, err := envoyRoutes(r, l)
		if err != nil {
			return nil, fmt.Errorf("route configuration %s, route %s: %w", l.GetName(), r.GetName(), err)
		}
		routes = append(routes, rs...)
	}
	evh := &routev3.VirtualHost{Name: vh.GetName(), Domains: []string{vh.GetHostname()}, Routes: routes}
	if err := evh.ValidateAll(); err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrInvalid, shortType(resourcev3.RouteType), l.GetName(), narrowHost(evh, err))
	}
	p, err := newPiece(xdsbucket.VirtualHostType, evh, vh.GetName(), func(r *busv1.XdsResource) {
		r.RouteConfiguration, r.Order = l.GetName(), xdsbucket.VirtualHostOrder(vh.GetName())
	})
	if err != nil {
		return nil, err
	}
	for _, rt := range routes {
		for _, c := range routeClusters(rt.GetRoute()) {
			p.refs = append(p.refs, ref{resourcev3.ClusterType, c})
		}
	}
	b.vhosts[k] = p
	return p, nil
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

// backend returns the pieces of an IR backend: its cluster and its load
// assignment.
func (b *Builder) backend(be *irv1.Backend) ([2]*piece, error) {
	b.seen[be] = true
	if ps, ok := b.backends[be]; ok {
		return ps, nil
	}
	c, err := Cluster(be)
	if err != nil {
		return [2]*piece{}, err
	}
	cp, err := newPiece(resourcev3.ClusterType, c, c.GetName(), nil)
	if err != nil {
		return [2]*piece{}, err
	}
	for _, s := range clusterSecrets(c) {
		cp.refs = append(cp.refs, ref{resourcev3.SecretType, s})
	}
	lp, err := newPiece(resourcev3.EndpointType, LoadAssignment(be), be.GetName(), nil)
	if err != nil {
		return [2]*piece{}, err
	}
	ps := [2]*piece{cp, lp}
	b.backends[be] = ps
	return ps, nil
}

func (b *Builder) secret(s *irv1.Secret) (*piece, error) {
	b.seen[s] = true
	if p := b.secrets[s]; p != nil {
		return p, nil
	}
	p, err := newPiece(resourcev3.SecretType, Secret(s), s.GetName(), nil)
	if err != nil {
		return nil, err
	}
	b.secrets[s] = p
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

// apiListeners returns the pieces of the [ProxylessListeners] of gw, given
// the resources so far.
func (b *Builder) apiListeners(gw *irv1.Gateway, next map[string]*busv1.XdsResource) ([]*piece, error) {
	routeConfigs := map[string]bool{}
	for _, l := range gw.GetListeners() {
		if lp := b.listeners[l.GetName()]; lp != nil && lp.shell != nil && next[lp.shell.suffix] != nil {
			routeConfigs[l.GetName()] = true
		}
	}
	seen := map[string]bool{}
	var out []*piece
	for _, l := range gw.GetListeners() { // sorted by port: the lowest port's wins
		if !routeConfigs[l.GetName()] {
			continue
		}
		for _, vh := range l.GetVirtualHosts() {
			host := vh.GetHostname()
			if host == "" || containsWildcard(host) || seen[host] {
				continue
			}
			seen[host] = true
			p, err := b.apiListener(host, l.GetName())
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func (b *Builder) apiListener(host, routeConfig string) (*piece, error) {
	k := [2]string{host, routeConfig}
	b.seen[k] = true
	if p := b.apis[k]; p != nil {
		return p, nil
	}
	lis, err := apiListener(host, routeConfig, routerFilter)
	if err != nil {
		return nil, err
	}
	if err := lis.ValidateAll(); err != nil {
		return nil, fmt.Errorf("%w: proxyless listener %s: %v", ErrInvalid, host, err)
	}
	p, err := newPiece(resourcev3.ListenerType, lis, host, func(r *busv1.XdsResource) { r.Proxyless = true })
	if err != nil {
		return nil, err
	}
	p.refs = []ref{{resourcev3.RouteType, routeConfig}}
	b.apis[k] = p
	return p, nil
}

// consistent checks that every resource the pieces name is in next.
func consistent(pieces []*piece) error {
	have := map[ref]bool{{resourcev3.ClusterType, InvalidBackendCluster}: true}
	for _, p := range pieces {
		switch t := p.res.GetTypeUrl(); t {
		case resourcev3.ClusterType, resourcev3.SecretType, resourcev3.EndpointType:
			have[ref{t, p.res.GetName()}] = true
		case resourcev3.RouteType:
			have[ref{t, p.res.GetName()}] = true
		}
	}
	for _, p := range pieces {
		for _, r := range p.refs {
			if !have[r] {
				return fmt.Errorf("%w: %s %s names %s %s, which does not exist", ErrInvalid,
					shortType(p.res.GetTypeUrl()), p.res.GetName(), shortType(r.typ), r.name)
			}
		}
		if p.res.GetTypeUrl() == resourcev3.ClusterType && p.res.GetName() != InvalidBackendCluster &&
			!have[ref{resourcev3.EndpointType, p.res.GetName()}] {
			return fmt.Errorf("%w: cluster %s has no load assignment", ErrInvalid, p.res.GetName())
		}
	}
	return nil
}

// clusterSecrets are the SDS secrets a cluster presents to its backends.
func clusterSecrets(c *clusterv3.Cluster) []string {
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
