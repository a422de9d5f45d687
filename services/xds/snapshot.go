package xds

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// The served types, in the order a stream sends them when several changed:
// secrets first (a listener or cluster that names a new secret warms
// until it has it), then clusters, endpoints, listeners and routes, so that
// what a resource depends on arrives before it (make-before-break).
const (
	typeSecret = iota
	typeCluster
	typeEndpoint
	typeListener
	typeRoute
	numTypes
)

var typeURLs = [numTypes]string{
	typeSecret:   xdsbucket.SecretType,
	typeCluster:  xdsbucket.ClusterType,
	typeEndpoint: xdsbucket.EndpointType,
	typeListener: xdsbucket.ListenerType,
	typeRoute:    xdsbucket.RouteType,
}

// typeIndex is the index of a served type URL; -1 for any other.
func typeIndex(url string) int {
	for i, u := range typeURLs {
		if u == url {
			return i
		}
	}
	return -1
}

// deletedVersion is the version of every type of the empty snapshot that
// replaces the snapshot of a deleted gateway. The translator's versions
// are hashes, never this word, so it is a new version to every Envoy of
// the gateway, and the same on every replica.
const deletedVersion = "deleted"

// emptyVersion is the version of a type a snapshot with type versions
// does not hold: it is served empty.
const emptyVersion = "empty"

// snapshot is what one gateway's clients of one kind (Envoys, or
// proxyless gRPC clients) are served. It never changes once built: the
// store swaps whole snapshots, and streams read them without locks.
type snapshot struct {
	version string
	types   [numTypes]*typeSnap
}

// nameSet is the sorted names of one type of a snapshot. Consecutive
// versions of a type whose names did not change share one nameSet, so
// that a stream subscribed to all of them compares one pointer.
type nameSet struct {
	names []string
	index map[string]int32
}

func newNameSet(names []string) *nameSet {
	n := &nameSet{names: names, index: make(map[string]int32, len(names))}
	for i, name := range names {
		n.index[name] = int32(i)
	}
	return n
}

func (n *nameSet) has(name string) bool { _, ok := n.index[name]; return ok }

func (n *nameSet) equal(names []string) bool { return slices.Equal(n.names, names) }

// typeSnap is one version of one type: its resources and the state of the
// world response body that every stream subscribed to all of them is sent.
type typeSnap struct {
	url, version string
	// seq numbers typeSnaps in the order they were built; prevSeq is the
	// seq of the one this was built over (0: none), and changed and removed
	// say what differs from it, so that a delta stream that holds the
	// previous version is sent the difference without comparing all.
	seq, prevSeq uint64
	changed      []int32
	removed      []string
	names        *nameSet
	res          []resourceSnap // in the order of names
	// body is the DiscoveryResponse without its nonce: version_info, the
	// resources, type_url. Each resource's Any is a slice of it.
	body wire
	// setAt is when this version was built, for the push latency.
	setAt time.Time
	// count and digest are the commit's, to reuse an unchanged type.
	count  uint32
	digest string
}

// resourceSnap is one resource of a typeSnap.
type resourceSnap struct {
	version string
	// any is the encoded google.protobuf.Any, slices of the body.
	any wire
	// value is the bus value the resource was built from, to see whether a
	// later version holds the same bytes.
	value []byte
	// deltaHead is the start of the encoded delta Resource: its tag and
	// length, name, version, and the tag and length of the Any.
	deltaHead []byte
}

var typeSeq atomic.Uint64

// Field numbers of DiscoveryResponse, DeltaDiscoveryResponse, Resource
// and Any.
const (
	respVersionInfo   = 1
	respResources     = 2
	respTypeURL       = 4
	respNonce         = 5
	deltaSystemVer    = 1
	deltaResources    = 2
	deltaTypeURL      = 4
	deltaNonce        = 5
	deltaRemoved      = 6
	resourceVersion   = 1
	resourceResource  = 2
	resourceName      = 3
	anyTypeURL        = 1
	anyValue          = 2
	resourceNameField = 1 // the name of every served type is its field 1
)

// emptyTypeSnap is a type with no resources at version.
func emptyTypeSnap(url, version string) *typeSnap {
	t, _ := buildTypeSnap(url, version, nil, nil, nil, nil)
	return t
}

// bigValue is the size from which a resource's value is not copied into
// its type's body: the body refers to the value's bytes, or to its parts
// (a route configuration of thousands of virtual hosts is megabytes, in
// pages that the next version shares; see xdsbucket.InParts).
const bigValue = 16 << 10

// buildTypeSnap builds a type from the bus's Anys, sorted by name. An Any's
// value is the concatenation of parts[i] when parts has one per resource.
// Each resource's version is versions' (when it has one per resource), or a
// hash of its value, reused from prev when the value is the same bytes.
func buildTypeSnap(url, version string, anys []*anypb.Any, versions []string, parts []*busv1.ResourceParts, prev *typeSnap) (*typeSnap, error) {
	t := &typeSnap{url: url, version: version, seq: typeSeq.Add(1), setAt: time.Now()}
	names := make([]string, len(anys))
	values := make([]wire, len(anys))
	size := protowire.SizeTag(respVersionInfo) + protowire.SizeBytes(len(version)) +
		protowire.SizeTag(respTypeURL) + protowire.SizeBytes(len(url))
	for i, a := range anys {
		if a.GetTypeUrl() != url {
			return nil, fmt.Errorf("%s resource %d holds a %s", url, i, a.GetTypeUrl())
		}
		values[i] = wire{a.GetValue()}
		if len(parts) == len(anys) {
			values[i] = parts[i].GetParts()
		}
		name, err := nameOf(values[i].head())
		if err != nil {
			return nil, fmt.Errorf("%s resource %d: %w", url, i, err)
		}
		if i > 0 && name <= names[i-1] {
			return nil, fmt.Errorf("%s %q: out of order or listed twice", url, name)
		}
		names[i] = name
		n := values[i].size()
		size += protowire.SizeTag(respResources) + protowire.SizeBytes(anySize(a.GetTypeUrl(), n))
		if n >= bigValue {
			size -= n
		}
	}
	t.names = newNameSet(names)
	if prev != nil && prev.names.equal(names) {
		t.names = prev.names
	}
	// buf holds the body but the big values, at its final capacity, so that
	// the slices of it stay valid.
	buf := make([]byte, 0, size)
	buf = protowire.AppendTag(buf, respVersionInfo, protowire.BytesType)
	buf = protowire.AppendString(buf, version)
	t.res = make([]resourceSnap, len(anys))
	part := 0
	for i, a := range anys {
		value := values[i]
		n := value.size()
		buf = protowire.AppendTag(buf, respResources, protowire.BytesType)
		buf = protowire.AppendVarint(buf, uint64(anySize(a.GetTypeUrl(), n)))
		start := len(buf)
		buf = protowire.AppendTag(buf, anyTypeURL, protowire.BytesType)
		buf = protowire.AppendString(buf, a.GetTypeUrl())
		buf = protowire.AppendTag(buf, anyValue, protowire.BytesType)
		buf = protowire.AppendVarint(buf, uint64(n))
		if n < bigValue {
			buf = value.appendTo(buf)
			t.res[i].any = wire{buf[start:len(buf):len(buf)]}
		} else {
			t.res[i].any = append(wire{buf[start:len(buf):len(buf)]}, value...)
			t.body = append(append(t.body, buf[part:len(buf):len(buf)]), value...)
			part = len(buf)
		}
		if len(value) == 1 {
			t.res[i].value = value[0]
		}
		switch {
		case len(versions) == len(anys):
			t.res[i].version = versions[i]
		case len(value) == 1:
			t.res[i].version = resourceVersionOf(names[i], value[0], prev)
		default:
			t.res[i].version = xdsbucket.Version(value.appendTo(nil))
		}
	}
	buf = protowire.AppendTag(buf, respTypeURL, protowire.BytesType)
	buf = protowire.AppendString(buf, url)
	t.body = append(t.body, buf[part:])
	for i := range t.res {
		t.res[i].deltaHead = deltaHead(names[i], &t.res[i])
	}
	if prev != nil {
		t.prevSeq = prev.seq
		t.changed, t.removed = diff(prev, t)
	}
	return t, nil
}

// wire is encoded bytes in parts, sent one after the other.
type wire [][]byte

func (w wire) size() int {
	n := 0
	for _, p := range w {
		n += len(p)
	}
	return n
}

// head is the first part that is not empty, where a resource's name is.
func (w wire) head() []byte {
	for _, p := range w {
		if len(p) > 0 {
			return p
		}
	}
	return nil
}

func (w wire) appendTo(b []byte) []byte {
	for _, p := range w {
		b = append(b, p...)
	}
	return b
}

// anySize is the size of an encoded Any of typeURL and a value of n bytes.
func anySize(typeURL string, n int) int {
	return protowire.SizeTag(anyTypeURL) + protowire.SizeBytes(len(typeURL)) +
		protowire.SizeTag(anyValue) + protowire.SizeBytes(n)
}

// deltaHead encodes what comes before the Any in a delta Resource.
func deltaHead(name string, r *resourceSnap) []byte {
	inner := protowire.SizeTag(resourceName) + protowire.SizeBytes(len(name)) +
		protowire.SizeTag(resourceVersion) + protowire.SizeBytes(len(r.version)) +
		protowire.SizeTag(resourceResource) + protowire.SizeBytes(r.any.size())
	var b []byte
	b = protowire.AppendTag(b, deltaResources, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(inner))
	b = protowire.AppendTag(b, resourceName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, resourceVersion, protowire.BytesType)
	b = protowire.AppendString(b, r.version)
	b = protowire.AppendTag(b, resourceResource, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(r.any.size()))
}

// resourceVersionOf is the version of a resource: prev's when prev holds
// the same bytes under name, else a hash of value.
func resourceVersionOf(name string, value []byte, prev *typeSnap) string {
	if prev != nil {
		if i, ok := prev.names.index[name]; ok {
			p := prev.res[i]
			if len(p.value) == len(value) && (unsafe.SliceData(p.value) == unsafe.SliceData(value) || string(p.value) == string(value)) {
				return p.version
			}
		}
	}
	return xdsbucket.Version(value)
}

// diff lists the resources of t that are new or changed since prev, and
// the names prev has that t does not.
func diff(prev, t *typeSnap) (changed []int32, removed []string) {
	for i, name := range t.names.names {
		j, ok := prev.names.index[name]
		if !ok || prev.res[j].version != t.res[i].version {
			changed = append(changed, int32(i))
		}
	}
	for _, name := range prev.names.names {
		if !t.names.has(name) {
			removed = append(removed, name)
		}
	}
	return changed, removed
}

// nameOf reads field 1, the name of every served type, from a marshalled
// resource.
func nameOf(value []byte) (string, error) {
	for b := value; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", protowire.ParseError(n)
		}
		if num == resourceNameField && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b[n:])
			if m < 0 {
				return "", protowire.ParseError(m)
			}
			if len(v) == 0 {
				break
			}
			return string(v), nil
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return "", protowire.ParseError(m)
		}
		b = b[n+m:]
	}
	return "", errors.New("no name")
}

// emptySnapshot is what a deleted gateway's clients are served: every
// type, none with a resource, at version.
func emptySnapshot(version string) *snapshot {
	s := &snapshot{version: version}
	for i, url := range typeURLs {
		s.types[i] = emptyTypeSnap(url, version)
	}
	return s
}

// buildSnapshots builds the Envoy and the proxyless snapshot of an
// assembled bus snapshot. prev is the Envoy snapshot served now (nil for
// none): a type whose version, count and digest did not change is reused
// whole. A type that carries a version is served at it; a snapshot with no
// type versions serves every type at its version, and one with type
// versions serves the types it does not hold empty at [emptyVersion].
func buildSnapshots(x *busv1.XdsSnapshot, prev, prevProxyless *snapshot) (envoy, proxyless *snapshot, err error) {
	byURL := map[string]*busv1.TypedResources{}
	versioned := false
	for _, t := range x.GetResources() {
		if typeIndex(t.GetTypeUrl()) < 0 {
			return nil, nil, fmt.Errorf("type %q is not an xDS type this server serves", t.GetTypeUrl())
		}
		byURL[t.GetTypeUrl()] = t
		versioned = versioned || t.GetVersion() != ""
	}
	envoy = &snapshot{version: x.GetVersion()}
	for i, url := range typeURLs {
		var old *typeSnap
		if prev != nil {
			old = prev.types[i]
		}
		if envoy.types[i], err = buildType(url, byURL[url], x.GetVersion(), versioned, old); err != nil {
			return nil, nil, err
		}
	}
	proxyless = &snapshot{version: x.GetVersion(), types: envoy.types}
	secrets := x.GetVersion()
	if versioned {
		secrets = emptyVersion
	}
	if prevProxyless != nil && prevProxyless.types[typeSecret].version == secrets {
		proxyless.types[typeSecret] = prevProxyless.types[typeSecret]
	} else {
		proxyless.types[typeSecret] = emptyTypeSnap(xdsbucket.SecretType, secrets)
	}
	var oldAPI *typeSnap
	if prevProxyless != nil {
		oldAPI = prevProxyless.types[typeListener]
	}
	api := &busv1.TypedResources{TypeUrl: xdsbucket.ListenerType, Resources: x.GetProxylessListeners()}
	if p := x.GetProxyless(); p != nil {
		api.Version, api.Count, api.Digest = p.GetVersion(), p.GetCount(), p.GetDigest()
	}
	if proxyless.types[typeListener], err = buildType(xdsbucket.ListenerType, api, x.GetVersion(), versioned, oldAPI); err != nil {
		return nil, nil, fmt.Errorf("proxyless listeners: %w", err)
	}
	return envoy, proxyless, nil
}

// buildType builds one type of a snapshot, or reuses old when it is the
// same version of the same resources.
func buildType(url string, t *busv1.TypedResources, version string, versioned bool, old *typeSnap) (*typeSnap, error) {
	v := t.GetVersion()
	switch {
	case t == nil && versioned:
		v = emptyVersion
	case v == "":
		v = version
	}
	if old != nil && old.version == v && old.count == t.GetCount() && old.digest == string(t.GetDigest()) &&
		len(old.res) == len(t.GetResources()) {
		return old, nil
	}
	out, err := buildTypeSnap(url, v, t.GetResources(), t.GetResourceVersions(), t.GetResourceParts(), old)
	if err != nil {
		return nil, err
	}
	out.count, out.digest = t.GetCount(), string(t.GetDigest())
	return out, nil
}
