package xdsbucket

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Version is the version of a resource value: a hash of its bytes.
func Version(value []byte) string {
	sum := sha256.Sum256(value)
	return hex.EncodeToString(sum[:8])
}

// Digest is the digest of one resource key: a hash of its suffix
// ("<kind>.<name>") and the resource's version.
func Digest(suffix, version string) [16]byte {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, s := range []string{suffix, version} {
		h.Write(binary.AppendUvarint(n[:0], uint64(len(s))))
		h.Write([]byte(s))
	}
	var d [16]byte
	copy(d[:], h.Sum(nil))
	return d
}

// Tally is the count and the XORed digests of a set of resource keys. The
// zero value is the empty set.
type Tally struct {
	Count  uint32
	Digest [16]byte
}

func (t *Tally) add(d [16]byte) {
	t.Count++
	for i := range d {
		t.Digest[i] ^= d[i]
	}
}

func (t *Tally) remove(d [16]byte) {
	t.Count--
	for i := range d {
		t.Digest[i] ^= d[i]
	}
}

// matches reports whether t is what a commit's entry says.
func (t Tally) matches(typed *busv1.TypedResources) bool {
	if t.Count == 0 {
		return typed.GetCount() == 0
	}
	return t.Count == typed.GetCount() && string(t.Digest[:]) == string(typed.GetDigest())
}

// proxylessTally is the key of the API listeners' tally in a Set.
const proxylessTally = "proxyless"

func tallyKey(k Kind) string {
	if k == KindAPIListener {
		return proxylessTally
	}
	return TypeOf(k)
}

// entry is one resource of a Set with its digest.
type entry struct {
	kind   Kind
	res    *busv1.XdsResource
	digest [16]byte
}

// Set is the resources of one gateway by key suffix, with a Tally per
// type. The translator keeps the Set it last wrote; a [Stage] keeps the
// Set it has read. A Set is not safe for concurrent use; the resources it
// holds must not be changed.
type Set struct {
	entries map[string]entry
	tallies map[string]*Tally
	// dirty are the tally keys whose resources changed since the last
	// Assemble, and dirtyRoutes the route configurations among them.
	dirty       map[string]bool
	dirtyRoutes map[string]bool
	// assembled is the last result of Assemble, reused for what did not
	// change.
	assembled *busv1.XdsSnapshot
	// shells are the route configurations without their virtual hosts, by
	// name, and hosts the virtual hosts of each route configuration, kept
	// sorted by [compareHosts] as they change, so that assembling one
	// route configuration reads only its own and sorts nothing.
	shells map[string]*busv1.XdsResource
	hosts  map[string][]*busv1.XdsResource
	// routes are the assembled route configurations by name, and
	// routeVersions their versions.
	routes        map[string][]byte
	routeVersions map[string]string
	// inParts makes Assemble give route configurations in parts
	// (TypedResources.resource_parts), kept in routeParts.
	inParts    bool
	routeParts map[string][][]byte
	// pages are the pages of the route configurations in parts, by name,
	// and pageSpan the average number of virtual hosts of a page.
	pages    map[string][]page
	pageSpan uint32
}

// NewSet returns an empty Set.
func NewSet() *Set {
	return &Set{entries: map[string]entry{}, tallies: map[string]*Tally{},
		dirty: map[string]bool{}, dirtyRoutes: map[string]bool{},
		shells: map[string]*busv1.XdsResource{}, hosts: map[string][]*busv1.XdsResource{},
		routes: map[string][]byte{}, routeVersions: map[string]string{}, routeParts: map[string][][]byte{},
		pages: map[string][]page{}, pageSpan: defaultPageSpan}
}

// Reserve makes room for n resources in an empty set, so that filling
// it does not grow its index step by step; it does nothing to a set that
// holds resources.
func (s *Set) Reserve(n int) {
	if len(s.entries) == 0 {
		s.entries = make(map[string]entry, n)
	}
}

// Len is the number of resources of the set.
func (s *Set) Len() int { return len(s.entries) }

// Get returns the resource under suffix, or nil.
func (s *Set) Get(suffix string) *busv1.XdsResource { return s.entries[suffix].res }

// Suffixes lists the suffixes of the set, sorted.
func (s *Set) Suffixes() []string {
	out := make([]string, 0, len(s.entries))
	for k := range s.entries {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Put adds or replaces r and returns its key suffix and whether the set
// changed (a resource of the same version under the same suffix is no
// change). r's version must be [Version] of its value; Put sets it when
// it is empty.
func (s *Set) Put(r *busv1.XdsResource) (suffix string, changed bool, err error) {
	k, err := KindOf(r)
	if err != nil {
		return "", false, err
	}
	if r.GetVersion() == "" {
		r.Version = Version(r.GetValue())
	}
	suffix = Suffix(k, r)
	old, had := s.entries[suffix]
	if had && old.res.GetVersion() == r.GetVersion() && string(old.res.GetValue()) == string(r.GetValue()) &&
		old.res.GetOrder() == r.GetOrder() {
		return suffix, false, nil
	}
	if had {
		s.drop(suffix, old)
	}
	e := entry{kind: k, res: r, digest: Digest(suffix, r.GetVersion())}
	s.entries[suffix] = e
	s.tally(k).add(e.digest)
	s.index(suffix, e, true)
	s.touch(e)
	return suffix, true, nil
}

// Delete removes the resource under suffix and reports whether it was there.
func (s *Set) Delete(suffix string) bool {
	old, had := s.entries[suffix]
	if had {
		s.drop(suffix, old)
	}
	return had
}

func (s *Set) drop(suffix string, e entry) {
	delete(s.entries, suffix)
	s.tally(e.kind).remove(e.digest)
	s.index(suffix, e, false)
	s.touch(e)
}

// index adds e to the route configuration indexes, or removes it.
func (s *Set) index(suffix string, e entry, add bool) {
	switch e.kind {
	case KindRoute:
		if add {
			s.shells[e.res.GetName()] = e.res
		} else {
			delete(s.shells, e.res.GetName())
		}
	case KindVirtualHost:
		// A route configuration's virtual hosts have distinct names, so
		// the search finds the one to remove, or where to insert.
		rc := e.res.GetRouteConfiguration()
		hosts := s.hosts[rc]
		i, found := slices.BinarySearchFunc(hosts, e.res, compareHosts)
		switch {
		case add && found:
			hosts[i] = e.res
		case add:
			s.hosts[rc] = slices.Insert(hosts, i, e.res)
		case found && len(hosts) == 1:
			delete(s.hosts, rc)
		case found:
			s.hosts[rc] = slices.Delete(hosts, i, i+1)
		}
	}
}

// compareHosts orders the virtual hosts of a route configuration: by
// order, then by name.
func compareHosts(a, b *busv1.XdsResource) int {
	return cmp.Or(strings.Compare(a.GetOrder(), b.GetOrder()), strings.Compare(a.GetName(), b.GetName()))
}

func (s *Set) tally(k Kind) *Tally {
	key := tallyKey(k)
	t := s.tallies[key]
	if t == nil {
		t = &Tally{}
		s.tallies[key] = t
	}
	return t
}

func (s *Set) touch(e entry) {
	s.dirty[tallyKey(e.kind)] = true
	switch e.kind {
	case KindRoute:
		s.dirtyRoutes[e.res.GetName()] = true
	case KindVirtualHost:
		s.dirtyRoutes[e.res.GetRouteConfiguration()] = true
	}
}

// sentWith names, for a type, the type whose change must send it again:
// an Envoy warms a changed cluster until it receives its endpoints, and a
// changed listener until it receives its route configuration.
var sentWith = map[string]string{
	EndpointType: ClusterType,
	RouteType:    ListenerType,
}

// Commit is the commit of the set as it is: for each type with resources,
// sorted by type URL, its version, count and digest, and the snapshot's
// version, all hashes of the tallies, so that equal sets give equal
// commits. sourceRevision is stamped on it.
func (s *Set) Commit(nodeCluster string, sourceRevision uint64) *busv1.XdsSnapshot {
	c := &busv1.XdsSnapshot{NodeCluster: nodeCluster, SourceRevision: sourceRevision}
	types := make([]string, 0, len(s.tallies))
	for key, t := range s.tallies {
		if key != proxylessTally && t.Count > 0 {
			types = append(types, key)
		}
	}
	slices.Sort(types)
	h := sha256.New()
	for _, typ := range types {
		t := s.tallies[typ]
		typed := &busv1.TypedResources{TypeUrl: typ, Count: t.Count, Digest: slices.Clone(t.Digest[:]),
			Version: typeVersion(t, s.tallies[sentWith[typ]])}
		c.Resources = append(c.Resources, typed)
		fmt.Fprintf(h, "%s %s\n", typ, typed.Version)
	}
	if t := s.tallies[proxylessTally]; t != nil && t.Count > 0 {
		c.Proxyless = &busv1.TypedResources{TypeUrl: ListenerType, Count: t.Count,
			Digest: slices.Clone(t.Digest[:]), Version: typeVersion(t, nil)}
		fmt.Fprintf(h, "proxyless %s\n", c.Proxyless.Version)
	}
	c.Version = hex.EncodeToString(h.Sum(nil)[:16])
	return c
}

func typeVersion(t, with *Tally) string {
	h := sha256.New()
	h.Write(t.Digest[:])
	binary.Write(h, binary.BigEndian, t.Count) //nolint:errcheck // hashes do not fail
	if with != nil {
		h.Write(with.Digest[:])
		binary.Write(h, binary.BigEndian, with.Count) //nolint:errcheck // hashes do not fail
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Holds reports whether the set holds exactly the resources commit names:
// every type's count and digest agree, and no type outside the commit has
// resources.
func (s *Set) Holds(commit *busv1.XdsSnapshot) bool {
	named := map[string]bool{}
	for _, typed := range commit.GetResources() {
		named[typed.GetTypeUrl()] = true
		if t := s.tallies[typed.GetTypeUrl()]; t == nil || !t.matches(typed) {
			return false
		}
	}
	named[proxylessTally] = true
	if t := s.tallies[proxylessTally]; !tallyOrEmpty(t).matches(commit.GetProxyless()) {
		return false
	}
	for key, t := range s.tallies {
		if !named[key] && t.Count > 0 {
			return false
		}
	}
	return true
}

func tallyOrEmpty(t *Tally) Tally {
	if t == nil {
		return Tally{}
	}
	return *t
}
