package gatewayapi

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// processGRPCRoutes attaches the GRPCRoutes whose parentRefs name the
// gateway and records the status of each. A GRPCRoute attaches to HTTP and
// HTTPS listeners like an HTTPRoute; its IR routes (Route.grpc set, HTTP/2
// backends) share the virtual hosts of HTTPRoutes and follow the same
// precedence.
func processGRPCRoutes(t *translation) {
	for _, route := range t.idx.GRPCRoutesFor(t.name) {
		t.attachGRPCRoute(route)
	}
}

func (t *translation) attachGRPCRoute(route *gatewayv1.GRPCRoute) {
	rules := t.buildGRPCRules(route)
	hostnames, badHostname := routeHostnames(route.Spec.Hostnames)
	kind := busv1.RouteGroupKind{Group: gatewayv1.GroupName, Kind: resources.KindGRPCRoute}
	status := &busv1.Status{
		Object:             objectRef(gatewayv1.GroupName, resources.KindGRPCRoute, route.Namespace, route.Name),
		Gateway:            t.gatewayRef(),
		ObservedGeneration: route.Generation,
	}
	counted := map[*listener]bool{}
	seen := map[string]bool{}
	for _, ref := range route.Spec.ParentRefs {
		key := parentKey(parentRef(ref))
		if !t.names(route.Namespace, ref) || seen[key] {
			continue
		}
		seen[key] = true
		attached, p := t.selectListeners(ref, &kind, route.Namespace, hostnames)
		if p == nil {
			attached, p = t.withoutKindConflicts(resources.KindGRPCRoute, &route.ObjectMeta, attached)
		}
		p = cmpProblem(p, badHostname, rules.notAccepted())
		var cs conditions
		if p != nil {
			cs.set(string(gatewayv1.RouteConditionAccepted), false, p.reason, p.message)
		} else {
			cs.set(string(gatewayv1.RouteConditionAccepted), true, string(gatewayv1.RouteReasonAccepted), "Route is accepted")
			t.placeGRPC(attached, rules, route, counted)
		}
		rules.setConditions(&cs, p == nil)
		status.Parents = append(status.Parents, &busv1.RouteParentStatus{
			ParentRef:      parentRef(ref),
			ControllerName: ControllerName,
			Conditions:     cs.stamp(route.Generation),
		})
	}
	t.routeStatuses = append(t.routeStatuses, status)
}

// placeGRPC adds a GRPCRoute's IR routes to the virtual hosts of its
// attachments and its backends to the gateway, and counts it once on each
// listener.
func (t *translation) placeGRPC(attached []attachment, rules *httpRules, route *gatewayv1.GRPCRoute, counted map[*listener]bool) {
	for _, b := range rules.backends {
		t.backends[b.Name] = b
	}
	for _, a := range attached {
		if !counted[a.listener] {
			counted[a.listener] = true
			a.listener.attached++
		}
		p := t.portOf(a.listener)
		for _, h := range a.hostnames {
			p.add(a.listener, h, rules.routes, route.CreationTimestamp.Time)
		}
	}
}
