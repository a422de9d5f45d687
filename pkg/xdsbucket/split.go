package xdsbucket

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Split returns the resources of an inline snapshot as the xds bucket
// holds them: one per resource, route configurations as their shell and
// their virtual hosts, API listeners marked proxyless.
func Split(snap *busv1.XdsSnapshot) (*Set, error) {
	set := NewSet()
	put := func(r *busv1.XdsResource) error {
		if _, _, err := set.Put(r); err != nil {
			return err
		}
		return nil
	}
	for _, t := range snap.GetResources() {
		for _, a := range t.GetResources() {
			if t.GetTypeUrl() == RouteType {
				if err := splitRoute(a, put); err != nil {
					return nil, err
				}
				continue
			}
			name, err := FieldOne(a.GetValue())
			if err != nil {
				return nil, fmt.Errorf("%s: %v", shortType(t.GetTypeUrl()), err)
			}
			if err := put(&busv1.XdsResource{TypeUrl: t.GetTypeUrl(), Name: name, Value: a.GetValue()}); err != nil {
				return nil, err
			}
		}
	}
	for _, a := range snap.GetProxylessListeners() {
		name, err := FieldOne(a.GetValue())
		if err != nil {
			return nil, fmt.Errorf("API listener: %v", err)
		}
		if err := put(&busv1.XdsResource{TypeUrl: a.GetTypeUrl(), Name: name, Value: a.GetValue(), Proxyless: true}); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// splitRoute puts the shell and the virtual hosts of one route
// configuration. A virtual host's order is its name, "*" last: the order
// RouteConfiguration gives them.
func splitRoute(a *anypb.Any, put func(*busv1.XdsResource) error) error {
	shell, vhosts, err := SplitRoute(a.GetValue())
	if err != nil {
		return fmt.Errorf("RouteConfiguration: %v", err)
	}
	rc, err := FieldOne(shell)
	if err != nil {
		return fmt.Errorf("RouteConfiguration: %v", err)
	}
	if err := put(&busv1.XdsResource{TypeUrl: RouteType, Name: rc, Value: shell}); err != nil {
		return err
	}
	last := ""
	for _, v := range vhosts {
		name, err := FieldOne(v)
		if err != nil {
			return fmt.Errorf("RouteConfiguration %s: virtual host: %v", rc, err)
		}
		order := VirtualHostOrder(name)
		if order <= last {
			return fmt.Errorf("RouteConfiguration %s: virtual host %q is out of order", rc, name)
		}
		last = order
		if err := put(&busv1.XdsResource{TypeUrl: VirtualHostType, Name: name,
			RouteConfiguration: rc, Order: order, Value: v}); err != nil {
			return err
		}
	}
	return nil
}

// VirtualHostOrder sorts the virtual hosts of a route configuration as the
// IR does: by name, "*" last.
func VirtualHostOrder(name string) string {
	if name == "*" {
		return "1"
	}
	return "0" + name
}

// FieldOne reads field 1 of a marshalled message, the name of every xDS
// resource (cluster_name of a ClusterLoadAssignment), without decoding the
// rest.
func FieldOne(b []byte) (string, error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", protowire.ParseError(n)
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", protowire.ParseError(n)
			}
			return string(v), nil
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return "", protowire.ParseError(n)
		}
		b = b[n:]
	}
	return "", nil
}
