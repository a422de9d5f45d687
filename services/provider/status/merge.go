package status

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// maxParents is the most entries status.parents may hold (the CRDs'
// maxItems).
const maxParents = 32

// Conditions returns live with each condition of want set: a condition of
// the same type is updated in place, a new type is appended, and conditions
// of other types are kept as they are (the Gateway API forbids removing or
// reordering conditions another party is responsible for).
// lastTransitionTime is kept when the status of a condition does not change,
// and is now otherwise. A condition whose observedGeneration is 0 gets
// generation. live is not modified.
func Conditions(live []metav1.Condition, want []*busv1.Condition, generation int64, now time.Time) []metav1.Condition {
	out := slices.Clone(live)
	for _, w := range want {
		c := metav1.Condition{
			Type: w.GetType(), Status: metav1.ConditionStatus(w.GetStatus()),
			Reason: w.GetReason(), Message: w.GetMessage(),
			ObservedGeneration: cmp.Or(w.GetObservedGeneration(), generation),
			LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)),
		}
		i := slices.IndexFunc(out, func(l metav1.Condition) bool { return l.Type == c.Type })
		switch {
		case i < 0:
			out = append(out, c)
		default:
			if out[i].Status == c.Status {
				c.LastTransitionTime = out[i].LastTransitionTime
			}
			out[i] = c
		}
	}
	return out
}

// GatewayClass returns the status of a GatewayClass with the conditions of
// its entries set on live; live itself when there is no entry.
func GatewayClass(live gatewayv1.GatewayClassStatus, entries []Entry, now time.Time) gatewayv1.GatewayClassStatus {
	out := *live.DeepCopy()
	for _, e := range entries {
		out.Conditions = Conditions(out.Conditions, e.Status.GetConditions(), e.Status.GetObservedGeneration(), now)
	}
	return out
}

// Gateway returns the status of a Gateway given live and its entries.
//
// The translator's entry (normally one) sets the conditions, the listeners
// (each listener's conditions merged with the live listener of the same
// name), the addresses and the count of attached ListenerSets. While a
// data-plane entry (the xds service's) holds Programmed False, that
// condition replaces the translator's Programmed; the first such entry by
// key wins. The infra service's entry, when it holds addresses, sets the
// addresses instead of the translator's.
// With no entry at all, live is returned.
func Gateway(live gatewayv1.GatewayStatus, entries []Entry, now time.Time) gatewayv1.GatewayStatus {
	out := *live.DeepCopy()
	var generation int64
	for _, e := range entries {
		if e.DataPlane || e.Infra {
			continue
		}
		st := e.Status
		generation = st.GetObservedGeneration()
		out.Conditions = Conditions(out.Conditions, st.GetConditions(), generation, now)
		out.Listeners = listeners(live.Listeners, st.GetListeners(), generation, now)
		out.Addresses = addresses(st.GetAddresses())
		out.AttachedListenerSets = attachedListenerSets(st)
	}
	for _, e := range entries {
		if e.Infra && len(e.Status.GetAddresses()) > 0 {
			out.Addresses = addresses(e.Status.GetAddresses())
		}
	}
	if p := dataPlaneProgrammed(entries); p != nil {
		if generation == 0 { // no translator entry: the generation last observed
			generation = observed(out.Conditions)
		}
		out.Conditions = Conditions(out.Conditions, []*busv1.Condition{p}, generation, now)
	}
	return out
}

// observed returns the highest observedGeneration of cs.
func observed(cs []metav1.Condition) int64 {
	var g int64
	for _, c := range cs {
		g = max(g, c.ObservedGeneration)
	}
	return g
}

// dataPlaneProgrammed returns the first Programmed False condition of the
// data-plane entries, by key; nil when there is none.
func dataPlaneProgrammed(entries []Entry) *busv1.Condition {
	for _, e := range entries {
		if !e.DataPlane {
			continue
		}
		for _, c := range e.Status.GetConditions() {
			if c.GetType() == string(gatewayv1.GatewayConditionProgrammed) && c.GetStatus() == string(metav1.ConditionFalse) {
				return c
			}
		}
	}
	return nil
}

// listeners returns the listener statuses of want, each with the conditions
// of the live listener of the same name updated.
func listeners(live []gatewayv1.ListenerStatus, want []*busv1.ListenerStatus, generation int64, now time.Time) []gatewayv1.ListenerStatus {
	out := make([]gatewayv1.ListenerStatus, 0, len(want))
	for _, w := range want {
		var prev []metav1.Condition
		if i := slices.IndexFunc(live, func(l gatewayv1.ListenerStatus) bool { return string(l.Name) == w.GetName() }); i >= 0 {
			prev = live[i].Conditions
		}
		kinds := make([]gatewayv1.RouteGroupKind, 0, len(w.GetSupportedKinds()))
		for _, k := range w.GetSupportedKinds() {
			group := gatewayv1.Group(cmp.Or(k.GetGroup(), gatewayv1.GroupName)) // the CRD's default
			kinds = append(kinds, gatewayv1.RouteGroupKind{Group: &group, Kind: gatewayv1.Kind(k.GetKind())})
		}
		out = append(out, gatewayv1.ListenerStatus{
			Name:           gatewayv1.SectionName(w.GetName()),
			SupportedKinds: kinds,
			AttachedRoutes: w.GetAttachedRoutes(),
			Conditions:     Conditions(prev, w.GetConditions(), generation, now),
		})
	}
	return out
}

// addresses returns the status addresses of values: IPAddress for IP
// addresses, Hostname otherwise.
func addresses(values []string) []gatewayv1.GatewayStatusAddress {
	if len(values) == 0 {
		return nil
	}
	out := make([]gatewayv1.GatewayStatusAddress, 0, len(values))
	for _, v := range values {
		t := gatewayv1.HostnameAddressType
		if _, err := netip.ParseAddr(v); err == nil {
			t = gatewayv1.IPAddressType
		}
		out = append(out, gatewayv1.GatewayStatusAddress{Type: &t, Value: v})
	}
	return out
}

// RouteParents returns a route's status.parents given live and the route's
// entries. Entries of other controllers than controller are kept in place;
// the entries of controller are those of the status entries, one per parent
// reference, sorted by parent reference, with the conditions of the live
// entry for the same parent updated: an entry of controller that no status
// entry holds any more is removed. At most 32 entries are returned (the
// CRDs' limit); the entries of controller beyond it are dropped.
func RouteParents(live []gatewayv1.RouteParentStatus, entries []Entry, controller string, now time.Time) []gatewayv1.RouteParentStatus {
	var out []gatewayv1.RouteParentStatus
	for _, p := range live {
		if string(p.ControllerName) != controller {
			out = append(out, *p.DeepCopy())
		}
	}
	out = append(out, routeParents.ours(live, entries, controller, now)...)
	if len(out) > maxParents {
		out = out[:maxParents]
	}
	return out
}

// parentList reads and builds the entries of a list keyed by controller
// name and parent reference: a route's status.parents (RouteParentStatus)
// or a policy's status.ancestors (PolicyAncestorStatus), whose entries hold
// the same fields under other names.
type parentList[S any] struct {
	key        func(S) (gatewayv1.GatewayController, gatewayv1.ParentReference)
	conditions func(S) []metav1.Condition
	entry      func(gatewayv1.GatewayController, gatewayv1.ParentReference, []metav1.Condition) S
}

// routeParents is a route's status.parents.
var routeParents = parentList[gatewayv1.RouteParentStatus]{
	key: func(p gatewayv1.RouteParentStatus) (gatewayv1.GatewayController, gatewayv1.ParentReference) {
		return p.ControllerName, p.ParentRef
	},
	conditions: func(p gatewayv1.RouteParentStatus) []metav1.Condition { return p.Conditions },
	entry: func(ctl gatewayv1.GatewayController, ref gatewayv1.ParentReference, cs []metav1.Condition) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: ctl, Conditions: cs}
	},
}

// ours returns the entries the status entries hold, one per parent
// reference, sorted by parent reference and without duplicates, each with
// the conditions of the live entry of the same controller and parent
// updated. A parent without a controller name is controller's.
func (l parentList[S]) ours(live []S, entries []Entry, controller string, now time.Time) []S {
	var ours []S
	for _, e := range entries {
		if e.DataPlane || e.Infra {
			continue
		}
		for _, p := range e.Status.GetParents() {
			ref := parentRef(p.GetParentRef())
			ctl := gatewayv1.GatewayController(cmp.Or(p.GetControllerName(), controller))
			var prev []metav1.Condition
			if i := l.index(live, ctl, ref); i >= 0 {
				prev = l.conditions(live[i])
			}
			ours = append(ours, l.entry(ctl, ref, Conditions(prev, p.GetConditions(), e.Status.GetObservedGeneration(), now)))
		}
	}
	slices.SortStableFunc(ours, func(a, b S) int {
		_, ra := l.key(a)
		_, rb := l.key(b)
		return cmp.Compare(parentKey(ra), parentKey(rb))
	})
	return slices.CompactFunc(ours, func(a, b S) bool {
		ca, ra := l.key(a)
		cb, rb := l.key(b)
		return ca == cb && parentKey(ra) == parentKey(rb)
	})
}

// index returns the index of the entry of list for controller and ref, or
// -1.
func (l parentList[S]) index(list []S, controller gatewayv1.GatewayController, ref gatewayv1.ParentReference) int {
	key := parentKey(ref)
	return slices.IndexFunc(list, func(s S) bool {
		ctl, r := l.key(s)
		return ctl == controller && parentKey(r) == key
	})
}

// parentRef converts p, with the defaults the CRDs apply (group
// gateway.networking.k8s.io, kind Gateway), so that what is written reads
// back the same.
func parentRef(p *busv1.ParentRef) gatewayv1.ParentReference {
	group := gatewayv1.Group(cmp.Or(p.GetGroup(), gatewayv1.GroupName))
	kind := gatewayv1.Kind(cmp.Or(p.GetKind(), "Gateway"))
	ref := gatewayv1.ParentReference{Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(p.GetName())}
	if ns := p.GetNamespace(); ns != "" {
		ref.Namespace = new(gatewayv1.Namespace(ns))
	}
	if s := p.GetSectionName(); s != "" {
		ref.SectionName = new(gatewayv1.SectionName(s))
	}
	if port := p.GetPort(); port != 0 {
		ref.Port = new(gatewayv1.PortNumber(port))
	}
	return ref
}

// parentKey is a comparable form of ref, with the CRDs' defaults applied.
func parentKey(ref gatewayv1.ParentReference) string {
	group, kind := gatewayv1.GroupName, "Gateway"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	var ns, section, port string
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if ref.SectionName != nil {
		section = string(*ref.SectionName)
	}
	if ref.Port != nil {
		port = strconv.Itoa(int(*ref.Port))
	}
	return group + "/" + kind + "/" + ns + "/" + string(ref.Name) + "/" + section + "/" + port
}
