package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/status"
)

// transitionTime is the lastTransitionTime of every printed condition, so
// that the same input always prints the same bytes.
var transitionTime = time.Unix(0, 0).UTC()

// statusDocs returns the Gateway API objects of the input in input order,
// each at generation 1 and with the status gatewire gives it, merged from the
// statuses of every gateway the way the provider writes them (package
// status). Objects that gatewire gives no status to (a route attached to no
// gatewire Gateway, a BackendTLSPolicy whose Services no route of a gatewire
// Gateway uses, a ReferenceGrant) have none; core objects (Services,
// EndpointSlices, Secrets, ...) are left out.
func statusDocs(objects []manifest.Object, t translated) ([]any, error) {
	entries := map[string][]status.Entry{}
	add := func(st *busv1.Status) {
		o := st.GetObject()
		key := objectKey(o.GetKind(), o.GetNamespace(), o.GetName())
		g := st.GetGateway()
		entries[key] = append(entries[key], status.Entry{Key: g.GetNamespace() + "/" + g.GetName(), Status: st})
	}
	for _, st := range t.classes {
		add(st)
	}
	for _, out := range t.gateways {
		for _, st := range out.Statuses {
			add(st)
		}
	}
	docs := make([]any, 0, len(objects))
	for _, o := range objects {
		if o.Kind.Group != gatewayv1.GroupName {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(o.JSON, &obj); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", o.Path, o.Line, err)
		}
		obj["metadata"].(map[string]any)["generation"] = 1 // manifest.Decode always sets metadata
		if st := objectStatus(o.Kind.Kind, entries[objectKey(o.Kind.Kind, o.Namespace, o.Name)], t.controller); st != nil {
			obj["status"] = st
		}
		docs = append(docs, obj)
	}
	return docs, nil
}

func objectKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

// objectStatus returns the status of an object of kind from its entries,
// whose route and policy entries carry controller; nil when there is none
// or gatewire does not write the kind's status.
func objectStatus(kind string, entries []status.Entry, controller string) any {
	switch {
	case len(entries) == 0:
		return nil
	case kind == "GatewayClass":
		return status.GatewayClass(gatewayv1.GatewayClassStatus{}, entries, transitionTime)
	case kind == "Gateway":
		return status.Gateway(gatewayv1.GatewayStatus{}, entries, transitionTime)
	case kind == "ListenerSet":
		return status.ListenerSet(gatewayv1.ListenerSetStatus{}, entries, transitionTime)
	case strings.HasSuffix(kind, "Route"):
		return gatewayv1.RouteStatus{
			Parents: status.RouteParents(nil, entries, controller, transitionTime),
		}
	case kind == "BackendTLSPolicy":
		return gatewayv1.PolicyStatus{
			Ancestors: status.PolicyAncestors(nil, entries, controller, transitionTime),
		}
	}
	return nil
}
