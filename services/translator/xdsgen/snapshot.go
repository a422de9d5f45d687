package xdsgen

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// ErrInvalid is returned by [Snapshot] when a resource fails Envoy's
// validation or the resources are inconsistent. The gateway's configuration
// cannot be published; the error says which resource is wrong.
var ErrInvalid = errors.New("invalid xDS configuration")

// NodeCluster is the node.cluster of a gateway's Envoys: <namespace>/<name>.
func NodeCluster(gw *irv1.Gateway) string { return gw.GetNamespace() + "/" + gw.GetName() }

// Resources returns the xDS resources of a gateway by type URL, each list
// sorted by name.
func Resources(gw *irv1.Gateway) (map[resourcev3.Type][]types.Resource, error) {
	out := map[resourcev3.Type][]types.Resource{}
	for _, l := range gw.GetListeners() {
		lis, err := Listener(l)
		if err != nil {
			return nil, err
		}
		if lis == nil {
			continue // nothing to serve
		}
		out[resourcev3.ListenerType] = append(out[resourcev3.ListenerType], lis)
		if !ServesHTTP(l) {
			continue
		}
		rc, err := RouteConfiguration(l)
		if err != nil {
			return nil, err
		}
		out[resourcev3.RouteType] = append(out[resourcev3.RouteType], rc)
	}
	for _, b := range gw.GetBackends() {
		c, err := Cluster(b)
		if err != nil {
			return nil, err
		}
		out[resourcev3.ClusterType] = append(out[resourcev3.ClusterType], c)
		out[resourcev3.EndpointType] = append(out[resourcev3.EndpointType], LoadAssignment(b))
	}
	addL4Resources(gw, out)
	for _, list := range out {
		slices.SortFunc(list, func(a, b types.Resource) int {
			return cmp.Compare(cachev3.GetResourceName(a), cachev3.GetResourceName(b))
		})
	}
	return out, nil
}

// Snapshot builds, checks and packs the xDS resources of a gateway. It fails
// with an error wrapping [ErrInvalid] when a resource does not pass
// ValidateAll or the set is not consistent: every RDS name a listener uses
// has its RouteConfiguration, every EDS cluster its ClusterLoadAssignment and
// every cluster a route names exists. The snapshot's version is a hash of
// its resources; source_revision is left for the caller.
func Snapshot(gw *irv1.Gateway) (*busv1.XdsSnapshot, error) {
	b, err := NewBuilder().Build(gw)
	if err != nil {
		return nil, err
	}
	return b.Set.Assemble(b.Commit)
}

// validatable is what every go-control-plane resource implements.
type validatable interface{ ValidateAll() error }

func validate(res map[resourcev3.Type][]types.Resource) error {
	for typeURL, list := range res {
		for _, r := range list {
			v, ok := r.(validatable)
			if !ok {
				return fmt.Errorf("%w: %s %s has no validation", ErrInvalid, typeURL, cachev3.GetResourceName(r))
			}
			if err := v.ValidateAll(); err != nil {
				return fmt.Errorf("%w: %s %s: %v", ErrInvalid, shortType(typeURL), cachev3.GetResourceName(r), narrow(r, err))
			}
		}
	}
	snap, err := cachev3.NewSnapshot("", res)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := snap.Consistent(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := listenerRefsExist(res); err != nil {
		return err
	}
	return routedClustersExist(res)
}

// narrow makes a validation error of a RouteConfiguration name the route at
// fault, which says which Gateway API rule it comes from.
func narrow(r types.Resource, err error) error {
	rc, ok := r.(*routev3.RouteConfiguration)
	if !ok {
		return err
	}
	for _, vh := range rc.GetVirtualHosts() {
		for _, rt := range vh.GetRoutes() {
			if rerr := rt.ValidateAll(); rerr != nil {
				return fmt.Errorf("virtual host %s, route %s: %w", vh.GetName(), rt.GetName(), rerr)
			}
		}
	}
	return err
}

// routedClustersExist checks that every cluster a route names is in the
// snapshot (Consistent does not look at routes).
func routedClustersExist(res map[resourcev3.Type][]types.Resource) error {
	clusters := map[string]bool{InvalidBackendCluster: true}
	for _, c := range res[resourcev3.ClusterType] {
		clusters[cachev3.GetResourceName(c)] = true
	}
	for _, r := range res[resourcev3.RouteType] {
		rc := r.(*routev3.RouteConfiguration)
		for _, vh := range rc.GetVirtualHosts() {
			for _, rt := range vh.GetRoutes() {
				for _, name := range routeClusters(rt.GetRoute()) {
					if !clusters[name] {
						return fmt.Errorf("%w: route %s of %s names cluster %s, which does not exist", ErrInvalid, rt.GetName(), rc.GetName(), name)
					}
				}
			}
		}
	}
	return nil
}

func routeClusters(a *routev3.RouteAction) []string {
	var out []string
	if c := a.GetCluster(); c != "" {
		out = append(out, c)
	}
	for _, w := range a.GetWeightedClusters().GetClusters() {
		out = append(out, w.GetName())
	}
	for _, m := range a.GetRequestMirrorPolicies() {
		out = append(out, m.GetCluster())
	}
	return out
}

// pack marshals the resources deterministically into a snapshot, types in
// type URL order; its versions are left to [stamp].
func pack(nodeCluster string, res map[resourcev3.Type][]types.Resource) (*busv1.XdsSnapshot, error) {
	typeURLs := make([]string, 0, len(res))
	for t := range res {
		typeURLs = append(typeURLs, t)
	}
	slices.Sort(typeURLs)
	snap := &busv1.XdsSnapshot{NodeCluster: nodeCluster}
	opts := proto.MarshalOptions{Deterministic: true}
	for _, t := range typeURLs {
		typed := &busv1.TypedResources{TypeUrl: t, Resources: make([]*anypb.Any, 0, len(res[t]))}
		for _, r := range res[t] {
			a := &anypb.Any{}
			if err := anypb.MarshalFrom(a, r, opts); err != nil {
				return nil, fmt.Errorf("%w: marshal %s %s: %v", ErrInvalid, shortType(t), cachev3.GetResourceName(r), err)
			}
			typed.Resources = append(typed.Resources, a)
		}
		snap.Resources = append(snap.Resources, typed)
	}
	return snap, nil
}

func shortType(typeURL string) string { return typeURL[len(resourcev3.APITypePrefix):] }
