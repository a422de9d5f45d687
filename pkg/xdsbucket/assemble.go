package xdsbucket

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// ErrIncomplete is returned by [Set.Assemble] when the set does not hold
// the resources of the commit.
var ErrIncomplete = errors.New("xdsbucket: the resources do not match the commit")

// virtualHostsField is the field number of RouteConfiguration.virtual_hosts.
const virtualHostsField = 2

// Assemble returns the snapshot commit describes with its resources
// inline: each type's resources sorted by name, route configurations whole,
// API listeners in proxyless_listeners, each type at the commit's version
// (the counts and digests stay in the commit). It fails with [ErrIncomplete]
// when the set does not hold what commit names ([Set.Holds]), and names
// the route configuration when a virtual host has none. Types that did not
// change since the last Assemble are the same values as then: the result
// is read-only, and shares the set's bytes.
func (s *Set) Assemble(commit *busv1.XdsSnapshot) (*busv1.XdsSnapshot, error) {
	if !s.Holds(commit) {
		return nil, fmt.Errorf("%w: commit %s of %s", ErrIncomplete, commit.GetVersion(), commit.GetNodeCluster())
	}
	prev := map[string]*busv1.TypedResources{}
	for _, t := range s.assembled.GetResources() {
		prev[t.GetTypeUrl()] = t
	}
	out := &busv1.XdsSnapshot{NodeCluster: commit.GetNodeCluster(), Version: commit.GetVersion(),
		SourceRevision: commit.GetSourceRevision()}
	if p := commit.GetProxyless(); p != nil {
		out.Proxyless = &busv1.TypedResources{TypeUrl: p.GetTypeUrl(), Version: p.GetVersion()}
	}
	var routes map[string][]byte
	var routeVersions map[string]string
	for _, typed := range commit.GetResources() {
		url := typed.GetTypeUrl()
		if p := prev[url]; p != nil && !s.dirty[url] {
			out.Resources = append(out.Resources, withSummary(p, typed))
			continue
		}
		var t *busv1.TypedResources
		if url == RouteType {
			var err error
			if t, routes, routeVersions, err = s.assembleRoutes(); err != nil {
				return nil, err
			}
		} else {
			anys, versions := s.anys(func(k Kind) bool { return k != KindAPIListener && TypeOf(k) == url })
			t = &busv1.TypedResources{TypeUrl: url, Resources: anys, ResourceVersions: versions}
		}
		out.Resources = append(out.Resources, withSummary(t, typed))
	}
	if s.assembled != nil && !s.dirty[proxylessTally] {
		out.ProxylessListeners = s.assembled.GetProxylessListeners()
	} else {
		out.ProxylessListeners, _ = s.anys(func(k Kind) bool { return k == KindAPIListener })
	}
	s.assembled = out
	if routes != nil {
		s.routes, s.routeVersions = routes, routeVersions
	}
	clear(s.dirty)
	clear(s.dirtyRoutes)
	return out, nil
}

// withSummary is t at the version of the commit's entry.
func withSummary(t, summary *busv1.TypedResources) *busv1.TypedResources {
	if t.GetVersion() == summary.GetVersion() {
		return t
	}
	return &busv1.TypedResources{TypeUrl: t.GetTypeUrl(), Resources: t.GetResources(),
		ResourceVersions: t.GetResourceVersions(), ResourceParts: t.GetResourceParts(), Version: summary.GetVersion()}
}

// anys returns the resources whose kind keep selects, as Anys sorted by
// name, and their versions.
func (s *Set) anys(keep func(Kind) bool) ([]*anypb.Any, []string) {
	var list []*busv1.XdsResource
	for _, e := range s.entries {
		if keep(e.kind) {
			list = append(list, e.res)
		}
	}
	slices.SortFunc(list, func(a, b *busv1.XdsResource) int { return cmp.Compare(a.GetName(), b.GetName()) })
	out := make([]*anypb.Any, len(list))
	versions := make([]string, len(list))
	for i, r := range list {
		out[i] = &anypb.Any{TypeUrl: r.GetTypeUrl(), Value: r.GetValue()}
		versions[i] = r.GetVersion()
	}
	return out, versions
}

// assembleRoutes builds every route configuration from its shell and its
// virtual hosts, reusing those that did not change: the route
// configurations sorted by name with their versions (joined, or in parts
// of pages when the set assembles in parts: see [page]), and the joined
// values and versions by name.
func (s *Set) assembleRoutes() (*busv1.TypedResources, map[string][]byte, map[string]string, error) {
	for rc, hosts := range s.hosts {
		if s.shells[rc] == nil {
			var names []string
			for _, vh := range hosts {
				names = append(names, vh.GetName())
			}
			return nil, nil, nil, fmt.Errorf("%w: virtual host %q of route configuration %q, which is not there",
				ErrIncomplete, slices.Min(names), rc)
		}
	}
	names := slices.Sorted(maps.Keys(s.shells))
	t := &busv1.TypedResources{TypeUrl: RouteType}
	routes := make(map[string][]byte, len(names))
	versions := make(map[string]string, len(names))
	var parts map[string][][]byte
	var pages map[string][]page
	if s.inParts {
		parts, pages = make(map[string][][]byte, len(names)), make(map[string][]page, len(names))
	}
	for _, name := range names {
		value, version, inParts, paged := s.routes[name], s.routeVersions[name], s.routeParts[name], s.pages[name]
		if (value == nil && inParts == nil) || s.dirtyRoutes[name] {
			vhosts := s.hosts[name]
			if s.inParts {
				value = nil
				inParts, paged = pagedRoute(s.shells[name].GetValue(), vhosts, paged, s.pageSpan)
			} else {
				value = joinRoute(s.shells[name].GetValue(), vhosts)
			}
			version = routeVersion(s.shells[name], vhosts)
		}
		routes[name], versions[name] = value, version
		t.Resources = append(t.Resources, &anypb.Any{TypeUrl: RouteType, Value: value})
		t.ResourceVersions = append(t.ResourceVersions, version)
		if s.inParts {
			parts[name], pages[name] = inParts, paged
			t.ResourceParts = append(t.ResourceParts, &busv1.ResourceParts{Parts: inParts})
		}
	}
	s.routeParts, s.pages = parts, pages
	return t, routes, versions, nil
}

// routeVersion is the version of the route configuration [JoinRoute] makes
// of shell and vhosts (in its order): a hash of their versions, each a hash
// of its value, so that the joined bytes need not be hashed again.
func routeVersion(shell *busv1.XdsResource, vhosts []*busv1.XdsResource) string {
	h := sha256.New()
	h.Write([]byte(shell.GetVersion()))
	for _, vh := range vhosts {
		h.Write([]byte{0})
		h.Write([]byte(vh.GetVersion()))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// JoinRoute is a route configuration made of its shell (the message without
// virtual_hosts) and its virtual hosts, sorted by order (then by name; vhosts
// itself is left as it is): the virtual hosts go right after the shell's
// name (field 1), where a deterministic marshalling of the whole message
// puts them.
func JoinRoute(shell []byte, vhosts []*busv1.XdsResource) []byte {
	return joinRoute(shell, slices.SortedFunc(slices.Values(vhosts), compareHosts))
}

// joinRoute is [JoinRoute] of virtual hosts already in order.
func joinRoute(shell []byte, vhosts []*busv1.XdsResource) []byte {
	at := nameEnd(shell)
	n := len(shell)
	for _, vh := range vhosts {
		n += protowire.SizeTag(virtualHostsField) + protowire.SizeBytes(len(vh.GetValue()))
	}
	out := make([]byte, 0, n)
	out = append(out, shell[:at]...)
	for _, vh := range vhosts {
		out = protowire.AppendTag(out, virtualHostsField, protowire.BytesType)
		out = protowire.AppendBytes(out, vh.GetValue())
	}
	return append(out, shell[at:]...)
}

// nameEnd is where field 1 of a marshalled message ends when the message
// starts with it, else 0.
func nameEnd(b []byte) int {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != 1 || typ != protowire.BytesType {
		return 0
	}
	m := protowire.ConsumeFieldValue(num, typ, b[n:])
	if m < 0 {
		return 0
	}
	return n + m
}

// SplitRoute is the inverse of [JoinRoute]: the shell of a marshalled
// route configuration and its virtual hosts' bytes, in order.
func SplitRoute(rc []byte) (shell []byte, vhosts [][]byte, err error) {
	shell = make([]byte, 0, 64)
	for b := rc; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, nil, protowire.ParseError(m)
		}
		if num == virtualHostsField && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			vhosts = append(vhosts, v)
		} else {
			shell = append(shell, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return shell, vhosts, nil
}
