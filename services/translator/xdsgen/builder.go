package xdsgen

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"slices"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// Builder builds the xDS resources of one gateway from its IR into an
// [xdsbucket.Set], one resource per key, and keeps what it built: the next
// Build compares the IR with the last one, piece by piece, and translates,
// validates and encodes only the pieces that are new (a virtual host,
// backend or secret it has not seen, a listener whose content changed).
// The IR is read-only once built, and the translator keeps the identity of
// unchanged pieces, so an edit of one route costs one virtual host,
// whatever the size of the gateway. A Builder is not safe for concurrent
// use.
type Builder struct {
	set *xdsbucket.Set
	// fresh is set until the first successful Build, and again after a
	// failed one, which starts the Builder over.
	fresh bool

	listeners map[string]*listenerPiece // by IR listener name
	hosts     map[string]*hostList      // the virtual hosts of each HTTP IR listener
	backends  []*irv1.Backend           // sorted by name, as the IR has them
	bpieces   [][2]*piece               // cluster and load assignment of each of backends
	secrets   map[*irv1.Secret]*piece   // the certificates of the last build
	small     map[string]*piece         // listeners, shells, secrets, UDP weighted clusters, by key suffix
	apis      map[string]*piece         // the API listener of each exact hostname
	holders   map[string][]holder       // exact hostname → HTTP IR listeners that have it, by port
	names     map[ref]int               // the resources of the set, by type and name
	refs      map[ref]int               // what the set's resources name
}

// piece is one encoded resource and the resources it names.
type piece struct {
	suffix string
	res    *busv1.XdsResource
	refs   []ref
	// cors is 1 for a virtual host with a route that has a CORS policy,
	// 0 otherwise.
	cors int
}

type ref struct{ typ, name string }

type listenerPiece struct {
	hash     [sha256.Size]byte
	listener *piece // nil: nothing to serve
	shell    *piece // the route configuration's shell, for HTTP listeners
}

// holder is an HTTP IR listener that has a hostname.
type holder struct {
	name string
	port uint32
}

// hostList is the virtual hosts of an HTTP IR listener as last built, and
// their pieces.
type hostList struct {
	port     uint32
	protocol irv1.Protocol
	vhosts   []*irv1.VirtualHost
	pieces   []*piece
	cors     int // the virtual hosts with a route that has a CORS policy
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	b := &Builder{}
	b.reset()
	return b
}

func (b *Builder) reset() {
	*b = Builder{
		set: xdsbucket.NewSet(), fresh: true,
		listeners: map[string]*listenerPiece{}, hosts: map[string]*hostList{},
		secrets: map[*irv1.Secret]*piece{}, small: map[string]*piece{}, apis: map[string]*piece{},
		holders: map[string][]holder{}, names: map[ref]int{}, refs: map[ref]int{},
	}
}

// Build is the result of one [Builder.Build]. Set belongs to the Builder
// and stays valid until its next Build.
type Build struct {
	Set    *xdsbucket.Set
	Commit *busv1.XdsSnapshot
	// Changed and Removed are the key suffixes whose resources are new or
	// changed, and gone, since the previous Build. Full is set when the
	// Builder had no previous Build (its first, or after a failed one):
	// then Changed is everything, and what a reader held before is not
	// known.
	Changed, Removed []string
	Full             bool
}

// delta is what a Build changes: pieces that go and pieces that come.
type delta struct {
	drops, adds []*piece
}

func (d *delta) swap(old, nu *piece) {
	if old == nu {
		return
	}
	if old != nil {
		d.drops = append(d.drops, old)
	}
	if nu != nil {
		d.adds = append(d.adds, nu)
	}
}

// Build brings the set to the xDS resources of gw, checks them (every
// resource passes ValidateAll, every route configuration a listener uses,
// every cluster a route or listener names and every secret a listener or
// cluster names exists, every cluster has its load assignment) and returns
// the set with its commit, versions computed, source revision left 0. It
// fails with an error wrapping [ErrInvalid] that names the resource at
// fault; the Builder then starts over, and its next Build is Full.
func (b *Builder) Build(gw *irv1.Gateway) (*Build, error) {
	out, err := b.build(gw)
	if err != nil {
		b.reset()
		return nil, err
	}
	return out, nil
}

func (b *Builder) build(gw *irv1.Gateway) (*Build, error) {
	var d delta
	small, err := b.smallPieces(gw)
	if err != nil {
		return nil, err
	}
	for suffix, p := range b.small {
		d.swap(p, small[suffix])
	}
	for suffix, p := range small {
		if b.small[suffix] == nil {
			d.swap(nil, p)
		}
	}
	hostsChanged, err := b.diffHosts(gw, &d)
	if err != nil {
		return nil, err
	}
	if err := b.diffBackends(gw.GetBackends(), &d); err != nil {
		return nil, err
	}
	routeConfigsChanged := false
	for _, p := range append(slices.Clip(d.drops), d.adds...) {
		routeConfigsChanged = routeConfigsChanged || p.res.GetTypeUrl() == resourcev3.RouteType && p.res.GetRouteConfiguration() == ""
	}
	if err := b.diffAPIListeners(gw, hostsChanged, routeConfigsChanged, small, &d); err != nil {
		return nil, err
	}
	if err := b.count(&d); err != nil {
		return nil, err
	}
	b.small = small
	return b.apply(gw, &d)
}

// smallPieces are the pieces there are few of, built anew (from caches)
// on every Build: listeners and route configuration shells, secrets, the
// weighted clusters of UDP listeners.
func (b *Builder) smallPieces(gw *irv1.Gateway) (map[string]*piece, error) {
	out := map[string]*piece{}
	listeners := map[string]*listenerPiece{}
	for _, l := range gw.GetListeners() {
		lp, err := b.listener(l)
		if err != nil {
			return nil, err
		}
		listeners[l.GetName()] = lp
		for _, p := range []*piece{lp.listener, lp.shell} {
			if p != nil && (p == lp.listener || ServesHTTP(l)) {
				out[p.suffix] = p
			}
		}
	}
	b.listeners = listeners
	secrets := map[*irv1.Secret]*piece{}
	for _, s := range gw.GetSecrets() {
		p, err := b.secret(s, secrets)
		if err != nil {
			return nil, err
		}
		out[p.suffix] = p
	}
	b.secrets = secrets
	l4, err := udpWeightedPieces(gw)
	if err != nil {
		return nil, err
	}
	for _, p := range l4 {
		if old := b.small[p.suffix]; old != nil && old.res.GetVersion() == p.res.GetVersion() {
			p = old
		}
		out[p.suffix] = p
	}
	return out, nil
}

// serving is whether IR listener l's virtual hosts are served: it has an
// Envoy listener and serves HTTP.
func (b *Builder) serving(l *irv1.Listener) bool {
	lp := b.listeners[l.GetName()]
	return lp != nil && lp.listener != nil && ServesHTTP(l)
}

// diffHosts compares the virtual hosts of each HTTP IR listener with the
// last build's, encoding the new ones; it returns the exact hostnames a
// listener gained or lost.
func (b *Builder) diffHosts(gw *irv1.Gateway, d *delta) (map[string]bool, error) {
	changed := map[string]bool{}
	next := map[string]*hostList{}
	for _, l := range gw.GetListeners() {
		if !b.serving(l) {
			continue
		}
		hl, err := b.diffHostList(l, b.hosts[l.GetName()], d, changed)
		if err != nil {
			return nil, err
		}
		next[l.GetName()] = hl
	}
	for name, old := range b.hosts {
		if next[name] == nil {
			for i, p := range old.pieces {
				d.swap(p, nil)
				b.lose(old.vhosts[i].GetHostname(), name, changed)
			}
		}
	}
	b.hosts = next
	return changed, nil
}

// diffHostList walks the last and the new virtual hosts of listener l, both
// sorted by name ("*" last), side by side.
func (b *Builder) diffHostList(l *irv1.Listener, old *hostList, d *delta, changed map[string]bool) (*hostList, error) {
	vhosts := l.GetVirtualHosts()
	if old != nil && (old.port != l.GetPort() || old.protocol != l.GetProtocol()) {
		for i, p := range old.pieces { // what the routes do depends on both
			d.swap(p, nil)
			b.lose(old.vhosts[i].GetHostname(), l.GetName(), changed)
		}
		old = nil
	}
	if old == nil {
		old = &hostList{}
	}
	if slices.Equal(old.vhosts, vhosts) {
		return old, nil
	}
	out := &hostList{port: l.GetPort(), protocol: l.GetProtocol(), vhosts: vhosts, pieces: make([]*piece, len(vhosts)), cors: old.cors}
	same := func(i, j, n int) { copy(out.pieces[j:j+n], old.pieces[i:i+n]) }
	err := alignHosts(old.vhosts, vhosts, same, func(i, j int) error {
		if j < 0 {
			d.swap(old.pieces[i], nil)
			b.lose(old.vhosts[i].GetHostname(), l.GetName(), changed)
			out.cors -= old.pieces[i].cors
			return nil
		}
		p, err := encodeVhost(vhosts[j], l)
		if err != nil {
			return err
		}
		var was *piece
		if i >= 0 {
			was = old.pieces[i]
			if was.res.GetVersion() == p.res.GetVersion() {
				p = was // the same bytes: keep the piece
			}
			out.cors -= was.cors
		} else {
			b.gain(vhosts[j].GetHostname(), l, changed)
		}
		out.cors += p.cors
		d.swap(was, p)
		out.pieces[j] = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// alignHosts walks the virtual hosts of the last build (old) and of this
// one, both sorted by compareHosts, side by side, in order. Runs of the
// same hosts (by identity) go to same, with their first indexes in old and
// in vhosts and their length; each is called with the indexes of the other
// virtual hosts of one name in old and in vhosts, or -1 for the side that
// has none of that name. The hosts before and after the first and last
// that differ are found by comparing pointers only, so that a walk of
// thousands of unchanged hosts costs little more than comparing two slices.
func alignHosts(old, vhosts []*irv1.VirtualHost, same func(i, j, n int), each func(i, j int) error) error {
	head := 0
	for head < len(old) && head < len(vhosts) && old[head] == vhosts[head] {
		head++
	}
	tail := 0
	for tail < len(old)-head && tail < len(vhosts)-head && old[len(old)-1-tail] == vhosts[len(vhosts)-1-tail] {
		tail++
	}
	same(0, 0, head)
	i, end := head, len(old)-tail
	for j := head; j < len(vhosts)-tail; j++ {
		vh := vhosts[j]
		if i < end && old[i] == vh {
			same(i, j, 1)
			i++
			continue
		}
		for i < end && compareHosts(old[i].GetName(), vh.GetName()) < 0 {
			if err := each(i, -1); err != nil {
				return err
			}
			i++
		}
		k := -1
		if i < end && old[i].GetName() == vh.GetName() {
			k = i
			i++
		}
		if k >= 0 && old[k] == vh {
			same(k, j, 1)
		} else if err := each(k, j); err != nil {
			return err
		}
	}
	for ; i < end; i++ {
		if err := each(i, -1); err != nil {
			return err
		}
	}
	same(end, len(vhosts)-tail, tail)
	return nil
}

// listenerCORS reports whether a route of IR listener l has a CORS policy.
// It counts from the last build's virtual hosts of l, so that only the
// virtual hosts that changed are read.
func (b *Builder) listenerCORS(l *irv1.Listener) bool {
	old := b.hosts[l.GetName()]
	if old == nil || old.port != l.GetPort() || old.protocol != l.GetProtocol() {
		return hasCORS(l)
	}
	vhosts := l.GetVirtualHosts()
	n := old.cors
	_ = alignHosts(old.vhosts, vhosts, func(int, int, int) {}, func(i, j int) error {
		if i >= 0 {
			n -= old.pieces[i].cors
		}
		if j >= 0 && vhostCORS(vhosts[j]) {
			n++
		}
		return nil
	})
	return n > 0
}

// compareHosts orders virtual hosts as the IR does: by name, "*" last.
func compareHosts(a, b string) int {
	return cmp.Or(cmp.Compare(rank(a == "*"), rank(b == "*")), cmp.Compare(a, b))
}

func rank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// gain and lose keep holders: which HTTP listeners have each exact
// hostname, by port (IR listeners are sorted by port).
func (b *Builder) gain(host string, l *irv1.Listener, changed map[string]bool) {
	if host == "" || containsWildcard(host) {
		return
	}
	changed[host] = true
	hs := b.holders[host]
	i, _ := slices.BinarySearchFunc(hs, l.GetPort(), func(h holder, p uint32) int { return cmp.Compare(h.port, p) })
	b.holders[host] = slices.Insert(hs, i, holder{name: l.GetName(), port: l.GetPort()})
}

func (b *Builder) lose(host, listener string, changed map[string]bool) {
	if host == "" || containsWildcard(host) {
		return
	}
	changed[host] = true
	hs := slices.DeleteFunc(b.holders[host], func(h holder) bool { return h.name == listener })
	if len(hs) == 0 {
		delete(b.holders, host)
	} else {
		b.holders[host] = hs
	}
}

// diffAPIListeners brings the API listeners of proxyless clients up to
// date: one per exact hostname of the virtual hosts of the HTTP listeners
// that have a route configuration, named like it, whose routes are those
// of the lowest port that has the hostname. Only the hostnames whose
// listeners changed are looked at, all of them when route configurations
// came or went.
func (b *Builder) diffAPIListeners(gw *irv1.Gateway, hosts map[string]bool, all bool, small map[string]*piece, d *delta) error {
	if all {
		for h := range b.apis {
			hosts[h] = true
		}
		for h := range b.holders {
			hosts[h] = true
		}
	}
	tails := map[string][]byte{} // each route configuration's connection manager
	for h := range hosts {
		var rc string
		for _, hd := range b.holders[h] {
			if lp := b.listeners[hd.name]; lp != nil && lp.shell != nil && small[lp.shell.suffix] != nil {
				rc = hd.name
				break
			}
		}
		old := b.apis[h]
		if old != nil && rc != "" && old.refs[0].name == rc {
			continue
		}
		var nu *piece
		if rc != "" {
			var err error
			if nu, err = encodeAPIListener(h, rc, tails); err != nil {
				return err
			}
			b.apis[h] = nu
		} else {
			delete(b.apis, h)
		}
		d.swap(old, nu)
	}
	return nil
}

// count updates what the set holds and names with d, and checks that
// everything a resource names is there.
func (b *Builder) count(d *delta) error {
	if len(b.names) == 0 && len(d.adds) > 0 { // a fresh build: size the maps once
		refs := 0
		for _, p := range d.adds {
			refs += len(p.refs)
		}
		b.names, b.refs = make(map[ref]int, len(d.adds)), make(map[ref]int, refs)
	}
	for _, p := range d.drops {
		b.names[ref{p.res.GetTypeUrl(), p.res.GetName()}]--
		for _, r := range p.refs {
			b.refs[r]--
		}
	}
	for _, p := range d.adds {
		b.names[ref{p.res.GetTypeUrl(), p.res.GetName()}]++
		for _, r := range p.refs {
			b.refs[r]++
		}
	}
	have := func(r ref) bool {
		return b.names[r] > 0 || r == ref{resourcev3.ClusterType, InvalidBackendCluster}
	}
	for _, p := range d.adds {
		for _, r := range p.refs {
			if !have(r) {
				return fmt.Errorf("%w: %s %s names %s %s, which does not exist", ErrInvalid,
					shortType(p.res.GetTypeUrl()), p.res.GetName(), shortType(r.typ), r.name)
			}
		}
		if p.res.GetTypeUrl() == resourcev3.ClusterType && !have(ref{resourcev3.EndpointType, p.res.GetName()}) {
			return fmt.Errorf("%w: cluster %s has no load assignment", ErrInvalid, p.res.GetName())
		}
	}
	for _, p := range d.drops {
		r := ref{p.res.GetTypeUrl(), p.res.GetName()}
		if b.names[r] > 0 {
			continue
		}
		delete(b.names, r)
		if b.refs[r] > 0 {
			return fmt.Errorf("%w: %s %s is gone, and is still named", ErrInvalid, shortType(r.typ), r.name)
		}
		if r.typ == resourcev3.EndpointType && have(ref{resourcev3.ClusterType, r.name}) {
			return fmt.Errorf("%w: cluster %s has no load assignment", ErrInvalid, r.name)
		}
	}
	return nil
}

// apply puts d into the set and returns the Build.
func (b *Builder) apply(gw *irv1.Gateway, d *delta) (*Build, error) {
	out := &Build{Set: b.set, Full: b.fresh}
	added := make(map[string]bool, len(d.adds))
	if b.fresh {
		b.set.Reserve(len(d.adds))
	}
	for _, p := range d.adds {
		added[p.suffix] = true
		if _, changed, err := b.set.Put(p.res); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		} else if changed {
			out.Changed = append(out.Changed, p.suffix)
		}
	}
	for _, p := range d.drops {
		if !added[p.suffix] && b.set.Delete(p.suffix) {
			out.Removed = append(out.Removed, p.suffix)
		}
	}
	b.fresh = false
	out.Commit = b.set.Commit(NodeCluster(gw), 0)
	return out, nil
}
