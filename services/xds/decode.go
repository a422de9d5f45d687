package xds

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	// The Envoy types a snapshot may hold, registered so that their Anys
	// decode. The typed config inside them (the connection manager, the
	// router) is passed to Envoy as it came; it is registered too so that
	// a decoded snapshot can be printed.
	_ "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// servedTypes are in every snapshot, empty when the gateway has none of
// them, so that an Envoy's first request of each type is answered and its
// initialization never waits for a type its gateway does not use.
var servedTypes = []resource.Type{
	resource.ClusterType,
	resource.EndpointType,
	resource.ListenerType,
	resource.RouteType,
	resource.SecretType,
}

// deletedVersion is the version of the empty snapshot that replaces the
// snapshot of a deleted gateway. The translator's versions are hashes of the
// resources, never this word, so it is a new version to every Envoy of the
// gateway, and the same on every replica.
const deletedVersion = "deleted"

// emptySnapshot is what a deleted gateway's Envoys are served: every served
// type, none with a resource, so they drop all they had from the gateway.
func emptySnapshot() *cache.Snapshot {
	snap, err := cache.NewSnapshot(deletedVersion, emptyTypes())
	if err != nil {
		panic(fmt.Sprintf("xds: empty snapshot: %v", err)) // the served types are all known to the cache
	}
	return snap
}

// emptyTypes maps every served type to no resources.
func emptyTypes() map[resource.Type][]types.Resource {
	byType := make(map[resource.Type][]types.Resource, len(servedTypes))
	for _, t := range servedTypes {
		byType[t] = []types.Resource{}
	}
	return byType
}

// validator is implemented by every Envoy message (protoc-gen-validate).
type validator interface{ ValidateAll() error }

// emptyVersion is the version of a type a snapshot with type versions does
// not hold: it is served empty.
const emptyVersion = "empty"

// decodeSnapshot turns the bus value into a consistent go-control-plane
// snapshot. Every resource must be of a type the cache serves, carry a
// unique name within its type, and pass ValidateAll; the snapshot must be
// Consistent. The error names the first resource that is not.
//
// A type that carries a version is served at that version, so that its
// clients are not sent it again while it does not change; when prev (the
// gateway's snapshot in the cache, or nil) serves the type at the same
// version, its decoded resources are reused instead of decoded again.
// Without type versions, every type is served at the snapshot's version.
func decodeSnapshot(x *busv1.XdsSnapshot, prev cache.ResourceSnapshot) (*cache.Snapshot, error) {
	if x.GetVersion() == "" {
		return nil, errors.New("version is empty")
	}
	byType := emptyTypes()
	versions := map[string]string{}
	for _, typed := range x.GetResources() {
		url := typed.GetTypeUrl()
		if _, seen := versions[url]; seen {
			return nil, fmt.Errorf("type %q is listed twice", url)
		}
		versions[url] = typed.GetVersion()
		if v := typed.GetVersion(); v != "" && prev != nil && prev.GetVersion(url) == v {
			byType[url] = slices.Collect(maps.Values(prev.GetResources(url)))
			continue
		}
		rs, err := decodeTyped(typed)
		if err != nil {
			return nil, err
		}
		byType[url] = rs
	}
	snap, err := cache.NewSnapshot(x.GetVersion(), byType)
	if err != nil {
		return nil, err
	}
	if typeVersioned(x) {
		for _, url := range servedTypes {
			v, held := versions[url]
			switch {
			case !held:
				v = emptyVersion
			case v == "":
				v = x.GetVersion()
			}
			snap.Resources[cache.GetResponseType(url)].Version = v
		}
	}
	if err := snap.Consistent(); err != nil {
		return nil, fmt.Errorf("inconsistent: %w", err)
	}
	return snap, nil
}

// typeVersioned reports whether a snapshot's types carry their versions.
func typeVersioned(x *busv1.XdsSnapshot) bool {
	return slices.ContainsFunc(x.GetResources(), func(t *busv1.TypedResources) bool { return t.GetVersion() != "" })
}

// decodeTyped decodes and checks the resources of one type.
func decodeTyped(typed *busv1.TypedResources) ([]types.Resource, error) {
	url := typed.GetTypeUrl()
	if cache.GetResponseType(url) == types.UnknownType {
		return nil, fmt.Errorf("type %q is not an xDS type this server serves", url)
	}
	names := make(map[string]bool, len(typed.GetResources()))
	out := make([]types.Resource, 0, len(typed.GetResources()))
	for i, a := range typed.GetResources() {
		if a.GetTypeUrl() != url {
			return nil, fmt.Errorf("%s resource %d: holds %q", url, i, a.GetTypeUrl())
		}
		msg, err := a.UnmarshalNew()
		if err != nil {
			return nil, fmt.Errorf("%s resource %d: %w", url, i, err)
		}
		name := cache.GetResourceName(msg)
		if name == "" {
			return nil, fmt.Errorf("%s resource %d: no name", url, i)
		}
		if names[name] {
			return nil, fmt.Errorf("%s %q: listed twice", url, name)
		}
		names[name] = true
		if err := validate(msg); err != nil {
			return nil, fmt.Errorf("%s %q: %w", url, name, err)
		}
		out = append(out, msg)
	}
	return out, nil
}

func validate(msg proto.Message) error {
	if v, ok := msg.(validator); ok {
		return v.ValidateAll()
	}
	return nil
}
