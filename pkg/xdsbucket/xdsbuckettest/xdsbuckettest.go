// Package xdsbuckettest writes snapshots to the xds bucket in its layout
// (package xdsbucket) for tests of its readers: each resource under its
// own key, route configurations split into their shell and virtual hosts,
// then the commit.
package xdsbuckettest

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Resources splits snap, a snapshot with its resources inline, into the
// resources of the bucket's layout.
func Resources(snap *busv1.XdsSnapshot) ([]*busv1.XdsResource, error) {
	var out []*busv1.XdsResource
	for _, typed := range snap.GetResources() {
		for _, a := range typed.GetResources() {
			rs, err := split(a, false)
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
		}
	}
	for _, a := range snap.GetProxylessListeners() {
		rs, err := split(a, true)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// split is the resource of a, or for a route configuration its shell and
// one resource per virtual host.
func split(a *anypb.Any, proxyless bool) ([]*busv1.XdsResource, error) {
	name, err := firstString(a.GetValue())
	if err != nil {
		return nil, fmt.Errorf("xdsbuckettest: %s: %w", a.GetTypeUrl(), err)
	}
	if a.GetTypeUrl() != xdsbucket.RouteType {
		return []*busv1.XdsResource{{TypeUrl: a.GetTypeUrl(), Name: name, Value: a.GetValue(), Proxyless: proxyless}}, nil
	}
	shell, vhosts, err := xdsbucket.SplitRoute(a.GetValue())
	if err != nil {
		return nil, fmt.Errorf("xdsbuckettest: route configuration %q: %w", name, err)
	}
	out := []*busv1.XdsResource{{TypeUrl: xdsbucket.RouteType, Name: name, Value: shell}}
	for i, vh := range vhosts {
		vhName, err := firstString(vh)
		if err != nil {
			return nil, fmt.Errorf("xdsbuckettest: virtual host %d of %q: %w", i, name, err)
		}
		out = append(out, &busv1.XdsResource{TypeUrl: xdsbucket.VirtualHostType, Name: vhName,
			RouteConfiguration: name, Order: fmt.Sprintf("%08d", i), Value: vh})
	}
	return out, nil
}

// firstString is field 1 of a marshalled message, the name of every xDS
// resource (cluster_name of a ClusterLoadAssignment).
func firstString(b []byte) (string, error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", protowire.ParseError(n)
		}
		if num == 1 && typ == protowire.BytesType {
			v, m := protowire.ConsumeString(b[n:])
			if m < 0 {
				return "", protowire.ParseError(m)
			}
			return v, nil
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return "", protowire.ParseError(m)
		}
		b = b[n+m:]
	}
	return "", fmt.Errorf("no name (field 1)")
}

// Publish writes snap (resources inline) to the xds bucket of b under the
// gateway key gatewayKey, as a translator would on an empty bucket, and
// returns the commit it wrote.
func Publish(t testing.TB, b *bus.Bus, gatewayKey string, snap *busv1.XdsSnapshot) *busv1.XdsSnapshot {
	t.Helper()
	rs, err := Resources(snap)
	if err != nil {
		t.Fatal(err)
	}
	set := xdsbucket.NewSet()
	ctx := context.Background()
	for _, r := range rs {
		suffix, _, err := set.Put(r)
		if err != nil {
			t.Fatalf("xdsbuckettest: %v", err)
		}
		if _, err := b.Put(ctx, bus.XDS, gatewayKey+"."+suffix, r); err != nil {
			t.Fatalf("xdsbuckettest: put %s: %v", suffix, err)
		}
	}
	commit := set.Commit(snap.GetNodeCluster(), snap.GetSourceRevision())
	if _, err := b.Put(ctx, bus.XDS, gatewayKey, commit); err != nil {
		t.Fatalf("xdsbuckettest: put the commit of %s: %v", gatewayKey, err)
	}
	return commit
}
