package main

import (
	"fmt"
	"regexp"
	"strings"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// dumpResource is one resource of a snapshot, decoded for its name and
// redacted.
type dumpResource struct {
	name  string
	value *anypb.Any
}

// dumpType is one section of a config dump: which resources it holds and
// how Envoy's admin API shapes them.
type dumpType struct {
	flag    string // the -type value that selects it
	typeURL string
	build   func(version string, rs []dumpResource) proto.Message
}

// dumpTypes are the sections in the order Envoy's /config_dump lists
// them.
var dumpTypes = []dumpType{
	{"clusters", xdsbucket.ClusterType, func(v string, rs []dumpResource) proto.Message {
		d := &adminv3.ClustersConfigDump{VersionInfo: v}
		for _, r := range rs {
			d.DynamicActiveClusters = append(d.DynamicActiveClusters, &adminv3.ClustersConfigDump_DynamicCluster{VersionInfo: v, Cluster: r.value})
		}
		return d
	}},
	{"endpoints", xdsbucket.EndpointType, func(v string, rs []dumpResource) proto.Message {
		d := &adminv3.EndpointsConfigDump{}
		for _, r := range rs {
			d.DynamicEndpointConfigs = append(d.DynamicEndpointConfigs, &adminv3.EndpointsConfigDump_DynamicEndpointConfig{VersionInfo: v, EndpointConfig: r.value})
		}
		return d
	}},
	{"listeners", xdsbucket.ListenerType, func(v string, rs []dumpResource) proto.Message {
		d := &adminv3.ListenersConfigDump{VersionInfo: v}
		for _, r := range rs {
			d.DynamicListeners = append(d.DynamicListeners, &adminv3.ListenersConfigDump_DynamicListener{Name: r.name,
				ActiveState: &adminv3.ListenersConfigDump_DynamicListenerState{VersionInfo: v, Listener: r.value}})
		}
		return d
	}},
	{"routes", xdsbucket.RouteType, func(v string, rs []dumpResource) proto.Message {
		d := &adminv3.RoutesConfigDump{}
		for _, r := range rs {
			d.DynamicRouteConfigs = append(d.DynamicRouteConfigs, &adminv3.RoutesConfigDump_DynamicRouteConfig{VersionInfo: v, RouteConfig: r.value})
		}
		return d
	}},
	{"secrets", xdsbucket.SecretType, func(v string, rs []dumpResource) proto.Message {
		d := &adminv3.SecretsConfigDump{}
		for _, r := range rs {
			d.DynamicActiveSecrets = append(d.DynamicActiveSecrets, &adminv3.SecretsConfigDump_DynamicSecret{Name: r.name, VersionInfo: v, Secret: r.value})
		}
		return d
	}},
}

// dumpTypeNames lists the -type values.
func dumpTypeNames() []string {
	names := make([]string, len(dumpTypes))
	for i, t := range dumpTypes {
		names[i] = t.flag
	}
	return names
}

// dumpFilter says what a config dump keeps.
type dumpFilter struct {
	// types are the -type values kept; nil keeps every type.
	types map[string]bool
	// name keeps the resources whose name it matches; nil keeps all.
	name *regexp.Regexp
	// proxyless dumps the API listeners of proxyless gRPC clients in place
	// of the Envoy listeners.
	proxyless bool
}

// parseDumpTypes reads a comma-separated -type value.
func parseDumpTypes(s string) (map[string]bool, error) {
	if s == "" || s == "all" {
		return nil, nil
	}
	out := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		known := false
		for _, d := range dumpTypes {
			known = known || d.flag == t
		}
		if !known {
			return nil, usageError("-type %q: want some of %s, comma-separated", t, strings.Join(dumpTypeNames(), ","))
		}
		out[t] = true
	}
	return out, nil
}

// globRegexp compiles a name pattern where * matches any characters,
// slashes included.
func globRegexp(glob string) *regexp.Regexp {
	if glob == "" {
		return nil
	}
	parts := strings.Split(glob, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// configDump shapes snap, a snapshot with its resources inline, as
// Envoy's /config_dump: one section per type, each resource at the
// version its type is served at, sensitive fields redacted.
func configDump(snap *busv1.XdsSnapshot, f dumpFilter) (*adminv3.ConfigDump, error) {
	byType := map[string]*busv1.TypedResources{}
	for _, typed := range snap.GetResources() {
		byType[typed.GetTypeUrl()] = typed
	}
	out := &adminv3.ConfigDump{}
	for _, t := range dumpTypes {
		if f.types != nil && !f.types[t.flag] {
			continue
		}
		typed := byType[t.typeURL]
		version, resources := typed.GetVersion(), typed.GetResources()
		if t.typeURL == xdsbucket.ListenerType && f.proxyless {
			version, resources = snap.GetProxyless().GetVersion(), snap.GetProxylessListeners()
		}
		if version == "" {
			version = snap.GetVersion()
		}
		rs, err := dumpResources(resources, f.name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.flag, err)
		}
		section, err := anypb.New(t.build(version, rs))
		if err != nil {
			return nil, err
		}
		out.Configs = append(out.Configs, section)
	}
	return out, nil
}

// dumpResources decodes, filters and redacts the resources of one type.
func dumpResources(anys []*anypb.Any, name *regexp.Regexp) ([]dumpResource, error) {
	var out []dumpResource
	for _, a := range anys {
		m, err := a.UnmarshalNew()
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", a.GetTypeUrl(), err)
		}
		n := resourceName(m.ProtoReflect())
		if name != nil && !name.MatchString(n) {
			continue
		}
		if err := redact(m.ProtoReflect()); err != nil {
			return nil, fmt.Errorf("%s %q: %w", a.GetTypeUrl(), n, err)
		}
		v, err := anypb.New(m)
		if err != nil {
			return nil, err
		}
		out = append(out, dumpResource{name: n, value: v})
	}
	return out, nil
}

// resourceName is the name of an xDS resource: its name field, or a
// ClusterLoadAssignment's cluster_name.
func resourceName(m protoreflect.Message) string {
	fields := m.Descriptor().Fields()
	for _, n := range []protoreflect.Name{"name", "cluster_name"} {
		if fd := fields.ByName(n); fd != nil && fd.Kind() == protoreflect.StringKind {
			return m.Get(fd).String()
		}
	}
	return ""
}
