package gatewayapi

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// listenerSet is one ListenerSet whose parentRef names the gateway, and
// what the translation found about it.
type listenerSet struct {
	obj *gatewayv1.ListenerSet
	// notAccepted is why the ListenerSet adds no listeners to the gateway
	// (NotAllowed, ParentNotAccepted); nil when its listeners are merged.
	notAccepted *problem
	// listeners are its listeners in spec order, once merged.
	listeners []*listener
}

func (s *listenerSet) name() types.NamespacedName {
	return types.NamespacedName{Namespace: s.obj.Namespace, Name: s.obj.Name}
}

// buildListenerSets merges the listeners of the ListenerSets the Gateway
// allows into the gateway, after its own: a ListenerSet's listeners are
// validated like the Gateway's, in the namespace of the ListenerSet, and
// open ports on the gateway's proxy. Listeners are taken in the order the
// Gateway API sets: the Gateway's, then the ListenerSets' oldest first,
// then by namespace and name. A ListenerSet listener that conflicts with
// an accepted listener before it (see [conflictWith]) is Conflicted and
// left out; the earlier listener keeps its port.
//
// ListenerSets merge only while the Gateway is Accepted (it has a valid
// listener of its own, or none at all); otherwise they are
// ParentNotAccepted.
func (t *gatewayCtx) buildListenerSets() {
	sets := t.idx.ListenerSetsFor(t.name)
	if len(sets) == 0 {
		return
	}
	sets = slices.Clone(sets)
	slices.SortStableFunc(sets, func(a, b *gatewayv1.ListenerSet) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	// as processGateway will find: Accepted unless no listener of its own
	// is valid
	gatewayAccepted := len(t.listeners) == 0 || slices.ContainsFunc(t.listeners, (*listener).ready)
	for _, obj := range sets {
		s := &listenerSet{obj: obj}
		t.listenerSets = append(t.listenerSets, s)
		if s.notAccepted = t.admitsListenerSet(obj.Namespace); s.notAccepted != nil {
			continue
		}
		if !gatewayAccepted {
			s.notAccepted = &problem{string(gatewayv1.ListenerSetReasonParentNotAccepted),
				fmt.Sprintf("Gateway %s is not accepted", t.name)}
			continue
		}
		for i := range obj.Spec.Listeners {
			spec := gatewayv1.Listener(obj.Spec.Listeners[i])
			s.listeners = append(s.listeners, t.newListener(&spec, s))
		}
	}
	t.markSetConflicts()
}

// admitsListenerSet returns why the Gateway's allowedListeners keep a
// ListenerSet of namespace ns out (NotAllowed), or nil. By default a
// Gateway allows none.
func (t *gatewayCtx) admitsListenerSet(ns string) *problem {
	from, byDefault := gatewayv1.NamespacesFromNone, ", the default"
	var selector *metav1.LabelSelector
	if al := t.gateway.Spec.AllowedListeners; al != nil && al.Namespaces != nil {
		if al.Namespaces.From != nil {
			from, byDefault = *al.Namespaces.From, ""
		}
		selector = al.Namespaces.Selector
	}
	notAllowed := func(format string, args ...any) *problem {
		return &problem{string(gatewayv1.ListenerSetReasonNotAllowed), fmt.Sprintf(format, args...)}
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return nil
	case gatewayv1.NamespacesFromSame:
		if ns == t.name.Namespace {
			return nil
		}
		return notAllowed("Gateway %s allows ListenerSets of its own namespace only", t.name)
	case gatewayv1.NamespacesFromSelector:
		sel, err := metav1.LabelSelectorAsSelector(selector)
		switch {
		case selector == nil || err != nil:
			return notAllowed("Gateway %s: allowedListeners.namespaces.selector is not a valid label selector: %v", t.name, err)
		case sel.Matches(namespaceLabels(t.idx, ns)):
			return nil
		}
		return notAllowed("Gateway %s does not select namespace %q for ListenerSets", t.name, ns)
	}
	if from == gatewayv1.NamespacesFromNone {
		return notAllowed("Gateway %s allows no ListenerSet (allowedListeners.namespaces.from is None%s)", t.name, byDefault)
	}
	return notAllowed("Gateway %s: allowedListeners.namespaces.from %q is not supported", t.name, from)
}

// setListeners returns the listeners of the merged ListenerSets, in
// precedence order.
func (t *gatewayCtx) setListeners() []*listener {
	var out []*listener
	for _, s := range t.listenerSets {
		out = append(out, s.listeners...)
	}
	return out
}

// allListeners returns the Gateway's listeners, then those of its
// ListenerSets, in precedence order.
func (t *gatewayCtx) allListeners() []*listener {
	if len(t.listenerSets) == 0 {
		return t.listeners
	}
	return append(slices.Clip(t.listeners), t.setListeners()...)
}

// markSetConflicts flags each ListenerSet listener that conflicts with an
// accepted listener before it: any of the Gateway's own, or a ListenerSet
// listener that is not conflicted itself.
func (t *gatewayCtx) markSetConflicts() {
	var before []*listener
	for _, l := range t.listeners {
		if l.notAccepted == nil {
			before = append(before, l)
		}
	}
	for _, l := range t.setListeners() {
		if l.notAccepted != nil {
			continue
		}
		var reason gatewayv1.ListenerConditionReason
		var with *listener
		for _, e := range before {
			if r := conflictWith(l, e); r != "" && (reason == "" || r == gatewayv1.ListenerReasonProtocolConflict && reason != r) {
				reason, with = r, e
			}
		}
		if reason == "" {
			before = append(before, l)
			continue
		}
		owner := fmt.Sprintf("a listener of Gateway %s", t.name)
		if with.set != nil {
			owner = "a listener of an older ListenerSet of the gateway" // never named: it may be another team's
		}
		l.conflict = &problem{string(reason), fmt.Sprintf("port %d: %s with %s, which takes precedence", l.spec.Port, conflictWhat(reason), owner)}
	}
}

func conflictWhat(reason gatewayv1.ListenerConditionReason) string {
	if reason == gatewayv1.ListenerReasonProtocolConflict {
		return "protocol conflicts"
	}
	return "hostname conflicts"
}

// conflictWith returns why listener l cannot share its port with e, by the
// rules of [markConflicts]; "" when they are distinct.
func conflictWith(l, e *listener) gatewayv1.ListenerConditionReason {
	if l.spec.Port != e.spec.Port || l.proto.udp != e.proto.udp {
		return ""
	}
	if conflictingProtocols([]*listener{l, e}) {
		return gatewayv1.ListenerReasonProtocolConflict
	}
	if l.hostname != e.hostname {
		return ""
	}
	return gatewayv1.ListenerReasonHostnameConflict
}

// declaredBy returns the object that declares listener l, the referring
// end of its certificate references: the Gateway or a ListenerSet. A
// ReferenceGrant for the one does not allow the references of the other.
func (t *gatewayCtx) declaredBy(l *listener) Reference {
	if l.set != nil {
		return Reference{Group: gatewayv1.GroupName, Kind: resources.KindListenerSet, Namespace: l.set.obj.Namespace}
	}
	return Reference{Group: gatewayv1.GroupName, Kind: resources.KindGateway, Namespace: t.name.Namespace}
}

// namespace returns the namespace of the object that declares l; gw is the
// Gateway's.
func (l *listener) namespace(gw string) string {
	if l.set != nil {
		return l.set.obj.Namespace
	}
	return gw
}

// qualifiedName names l in the IR: the Gateway's listeners by their name,
// a ListenerSet's by "<namespace>/<ListenerSet>/<name>", since listener
// names are unique only within the object that declares them.
func (l *listener) qualifiedName() string {
	if l.set == nil {
		return string(l.spec.Name)
	}
	return l.set.obj.Namespace + "/" + l.set.obj.Name + "/" + string(l.spec.Name)
}

// isParent reports whether ref, from a route in namespace ns, names the
// translated gateway or one of the ListenerSets whose parentRef names it.
func (t *gatewayCtx) isParent(ns string, ref gatewayv1.ParentReference) bool {
	nn := types.NamespacedName{Namespace: resources.NamespaceOr(ref.Namespace, ns), Name: string(ref.Name)}
	switch {
	case resources.IsGatewayRef(ref):
		return nn == t.name
	case resources.IsListenerSetRef(ref):
		return slices.ContainsFunc(t.listenerSets, func(s *listenerSet) bool { return s.name() == nn })
	}
	return false
}

// parentName names, in a route's condition messages, what ref from a route
// in namespace ns names: "ListenerSet <namespace>/<name>" for a ListenerSet,
// "the gateway" for the translated Gateway.
func parentName(ns string, ref gatewayv1.ParentReference) string {
	if !resources.IsListenerSetRef(ref) {
		return "the gateway"
	}
	nn := types.NamespacedName{Namespace: resources.NamespaceOr(ref.Namespace, ns), Name: string(ref.Name)}
	return "ListenerSet " + nn.String()
}

// parentListeners returns the listeners a parent of the gateway (see
// isParent) offers a parentRef before its sectionName and port: the
// Gateway's own for a parentRef to the Gateway, a ListenerSet's for a
// parentRef to it. A ListenerSet that is not accepted offers none, and the
// problem (NoMatchingParent) says why.
func (t *gatewayCtx) parentListeners(ns string, ref gatewayv1.ParentReference) ([]*listener, *problem) {
	if !resources.IsListenerSetRef(ref) {
		return t.listeners, nil
	}
	nn := types.NamespacedName{Namespace: resources.NamespaceOr(ref.Namespace, ns), Name: string(ref.Name)}
	for _, s := range t.listenerSets {
		if s.name() != nn {
			continue
		}
		if s.notAccepted != nil {
			return nil, &problem{string(gatewayv1.RouteReasonNoMatchingParent),
				fmt.Sprintf("ListenerSet %s is not attached to Gateway %s (%s)", nn, t.name, s.notAccepted.reason)}
		}
		return s.listeners, nil
	}
	return nil, nil
}
