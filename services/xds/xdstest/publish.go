package xdstest

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Publisher writes inline snapshots (such as [Sample]'s) to the xds
// bucket in its layout, as the translator does: one key per resource
// (route configurations split into their shell and virtual hosts with
// xdsbucket.SplitRoute), only the keys that changed since its last
// publication of the gateway, the keys of removed resources purged, and
// the commit last. The commit carries the snapshot's version, and each
// type the version the snapshot gives it ("" when it gives none, so that
// the type is served at the snapshot's version), so that tests choose the
// versions their clients see. A Publisher is not safe for concurrent use.
type Publisher struct {
	bus  *bus.Bus
	sets map[string]*xdsbucket.Set
	rev  uint64
}

// NewPublisher returns a Publisher that writes to b.
func NewPublisher(b *bus.Bus) *Publisher {
	return &Publisher{bus: b, sets: map[string]*xdsbucket.Set{}}
}

// Publish writes x under the gateway key of its node cluster and returns
// the commit it wrote.
func (p *Publisher) Publish(ctx context.Context, x *busv1.XdsSnapshot) (*busv1.XdsSnapshot, error) {
	ns, name, ok := strings.Cut(x.GetNodeCluster(), "/")
	if !ok {
		return nil, fmt.Errorf("xdstest: node cluster %q is not <namespace>/<gateway>", x.GetNodeCluster())
	}
	return p.PublishAt(ctx, bus.GatewayKey(ns, name), x)
}

// PublishAt writes x under the gateway key key, whatever its node cluster.
func (p *Publisher) PublishAt(ctx context.Context, key string, x *busv1.XdsSnapshot) (*busv1.XdsSnapshot, error) {
	rs, err := Resources(x)
	if err != nil {
		return nil, err
	}
	set := xdsbucket.NewSet()
	for _, r := range rs {
		if _, _, err := set.Put(r); err != nil {
			return nil, fmt.Errorf("xdstest: %w", err)
		}
	}
	prev := p.sets[key]
	if prev == nil {
		prev = xdsbucket.NewSet()
	}
	for _, suffix := range set.Suffixes() {
		r := set.Get(suffix)
		if old := prev.Get(suffix); old != nil && old.GetVersion() == r.GetVersion() && old.GetOrder() == r.GetOrder() {
			continue
		}
		if _, err := p.bus.Put(ctx, bus.XDS, key+"."+suffix, r); err != nil {
			return nil, err
		}
	}
	for _, suffix := range prev.Suffixes() {
		if set.Get(suffix) == nil {
			if err := p.bus.Delete(ctx, bus.XDS, key+"."+suffix); err != nil {
				return nil, err
			}
		}
	}
	p.rev++
	commit := set.Commit(x.GetNodeCluster(), p.rev)
	stampVersions(commit, x)
	if _, err := p.bus.Put(ctx, bus.XDS, key, commit); err != nil {
		return nil, err
	}
	p.sets[key] = set
	return commit, nil
}

// Delete deletes the gateway's commit under key, then purges its
// resources.
func (p *Publisher) Delete(ctx context.Context, key string) error {
	if err := p.bus.Delete(ctx, bus.XDS, key); err != nil {
		return err
	}
	if set := p.sets[key]; set != nil {
		for _, suffix := range set.Suffixes() {
			if err := p.bus.Delete(ctx, bus.XDS, key+"."+suffix); err != nil {
				return err
			}
		}
	}
	delete(p.sets, key)
	return nil
}

// stampVersions gives the commit x's versions.
func stampVersions(commit, x *busv1.XdsSnapshot) {
	commit.Version = x.GetVersion()
	versioned := false
	byURL := map[string]string{}
	for _, t := range x.GetResources() {
		byURL[t.GetTypeUrl()] = t.GetVersion()
		versioned = versioned || t.GetVersion() != ""
	}
	for _, t := range commit.GetResources() {
		t.Version = byURL[t.GetTypeUrl()]
	}
	if commit.GetProxyless() != nil && !versioned {
		commit.Proxyless.Version = ""
	}
}

// Resources are the resources of the inline snapshot x as the bucket
// holds them: route configurations as their shell and one resource per
// virtual host, and the API listeners marked proxyless.
func Resources(x *busv1.XdsSnapshot) ([]*busv1.XdsResource, error) {
	var out []*busv1.XdsResource
	for _, t := range x.GetResources() {
		for i, a := range t.GetResources() {
			if t.GetTypeUrl() != xdsbucket.RouteType {
				r, err := resourceOf(a.GetTypeUrl(), a.GetValue())
				if err != nil {
					return nil, fmt.Errorf("xdstest: %s resource %d: %w", t.GetTypeUrl(), i, err)
				}
				out = append(out, r)
				continue
			}
			rs, err := splitRoute(a.GetValue())
			if err != nil {
				return nil, fmt.Errorf("xdstest: route configuration %d: %w", i, err)
			}
			out = append(out, rs...)
		}
	}
	for i, a := range x.GetProxylessListeners() {
		r, err := resourceOf(a.GetTypeUrl(), a.GetValue())
		if err != nil {
			return nil, fmt.Errorf("xdstest: proxyless listener %d: %w", i, err)
		}
		r.Proxyless = true
		out = append(out, r)
	}
	return out, nil
}

func resourceOf(typeURL string, value []byte) (*busv1.XdsResource, error) {
	name, err := NameOf(value)
	if err != nil {
		return nil, err
	}
	return &busv1.XdsResource{TypeUrl: typeURL, Name: name, Value: value, Version: xdsbucket.Version(value)}, nil
}

// splitRoute is a route configuration's shell and its virtual hosts, in
// their order.
func splitRoute(value []byte) ([]*busv1.XdsResource, error) {
	shell, vhosts, err := xdsbucket.SplitRoute(value)
	if err != nil {
		return nil, err
	}
	rc, err := resourceOf(xdsbucket.RouteType, shell)
	if err != nil {
		return nil, err
	}
	out := []*busv1.XdsResource{rc}
	for i, v := range vhosts {
		vh, err := resourceOf(xdsbucket.VirtualHostType, v)
		if err != nil {
			return nil, fmt.Errorf("virtual host %d: %w", i, err)
		}
		vh.RouteConfiguration, vh.Order = rc.GetName(), fmt.Sprintf("%08d", i)
		out = append(out, vh)
	}
	return out, nil
}

// NameOf reads the name of a marshalled xDS resource: its field 1, which
// is the name of every type the xds bucket holds.
func NameOf(value []byte) (string, error) {
	for b := value; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return "", protowire.ParseError(m)
		}
		if num == 1 && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			return string(v), nil
		}
		b = b[n+m:]
	}
	return "", fmt.Errorf("no name")
}
