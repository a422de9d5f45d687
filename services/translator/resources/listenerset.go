package resources

import (
	"slices"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindListenerSet is the kind of ListenerSets in resource keys.
const KindListenerSet = "ListenerSet"

// listenerSetIndex holds the ListenerSets and what relates them to
// gateways: a ListenerSet belongs to the Gateway its parentRef names, and
// so do the routes whose parentRefs name the ListenerSet.
type listenerSetIndex struct {
	objects map[types.NamespacedName]*gatewayv1.ListenerSet
	// byGateway: gateway → ListenerSets whose parentRef names it.
	byGateway refIndex[types.NamespacedName]
	// routes: ListenerSet → routes (of every kind) with a parentRef to it.
	routes refIndex[types.NamespacedName]
	// secrets: Secret → ListenerSets whose listeners use it as a
	// certificate.
	secrets refIndex[types.NamespacedName]
}

func newListenerSetIndex(clock *uint64, log *changeLog) listenerSetIndex {
	return listenerSetIndex{
		objects:   map[types.NamespacedName]*gatewayv1.ListenerSet{},
		byGateway: newRefIndex[types.NamespacedName](clock, log),
		routes:    newRefIndex[types.NamespacedName](clock, log),
		secrets:   newRefIndex[types.NamespacedName](clock, log),
	}
}

type listenerSetKind struct{}

func (listenerSetKind) group() string { return gatewayv1.GroupName }

func (listenerSetKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &gatewayv1.ListenerSet{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	k := key(KindListenerSet, nn)
	x.listenerSets.objects[nn] = obj
	var parents []types.NamespacedName
	if gw, ok := ListenerSetGateway(obj); ok {
		parents = []types.NamespacedName{gw}
	}
	x.listenerSets.byGateway.set(k, parents)
	secrets := ListenerSetSecrets(obj)
	x.listenerSets.secrets.set(k, secrets)
	x.crossRefs.set(k, crossNamespace(nn.Namespace, secrets))
	return nil
}

func (listenerSetKind) remove(x *Index, nn types.NamespacedName) {
	k := key(KindListenerSet, nn)
	delete(x.listenerSets.objects, nn)
	x.listenerSets.byGateway.set(k, nil)
	x.listenerSets.secrets.set(k, nil)
	x.crossRefs.set(k, nil)
}

func (listenerSetKind) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	listenerSetAffects(x, key(KindListenerSet, nn), c)
}

// listenerSetAffects adds the gateway of a ListenerSet, or the gateways of
// the ListenerSets a route names as parents; other objects add nothing.
func listenerSetAffects(x *Index, k ObjectKey, c *changeSet) {
	sets := x.listenerSets.routes.targets(k)
	if k.Kind == KindListenerSet {
		sets = []types.NamespacedName{k.NamespacedName}
	}
	for _, ls := range sets {
		for _, gw := range x.listenerSets.byGateway.targets(key(KindListenerSet, ls)) {
			c.gateway(gw)
		}
	}
}

// listenerSetSecretAffects adds the gateways of the ListenerSets that use
// the Secret nn as a certificate.
func listenerSetSecretAffects(x *Index, nn types.NamespacedName, c *changeSet) {
	for _, ls := range x.listenerSets.secrets.sources(nn) {
		listenerSetAffects(x, ls, c)
	}
}

// ListenerSet returns the ListenerSet nn, or nil.
func (x *Index) ListenerSet(nn types.NamespacedName) *gatewayv1.ListenerSet {
	return x.listenerSets.objects[nn]
}

// ListenerSetsFor returns the ListenerSets whose parentRef names gateway,
// sorted by namespace and name, whether or not the gateway allows them.
func (x *Index) ListenerSetsFor(gateway types.NamespacedName) []*gatewayv1.ListenerSet {
	names := x.listenerSets.byGateway.sourcesOf(KindListenerSet, gateway)
	out := make([]*gatewayv1.ListenerSet, 0, len(names))
	for _, nn := range names {
		out = append(out, x.listenerSets.objects[nn])
	}
	return out
}

// MissingListenerSetParents returns, sorted, the gateways that a
// ListenerSet's parentRef names and that the index does not hold: nobody
// translates them, but their ListenerSets still get a status.
func (x *Index) MissingListenerSetParents() []types.NamespacedName {
	var out []types.NamespacedName
	for gw := range x.listenerSets.byGateway.by {
		if x.gateways[gw] == nil {
			out = append(out, gw)
		}
	}
	slices.SortFunc(out, compareNames)
	return out
}

// routeNames returns the names of the routes of kind with a parentRef to
// gateway or to a ListenerSet whose parentRef names gateway, sorted by
// namespace and name, without duplicates.
func (x *Index) routeNames(kind string, gateway types.NamespacedName) []types.NamespacedName {
	names := x.routesByGateway.sourcesOf(kind, gateway)
	sets := x.listenerSets.byGateway.sourcesOf(KindListenerSet, gateway)
	if len(sets) == 0 {
		return names
	}
	for _, ls := range sets {
		names = append(names, x.listenerSets.routes.sourcesOf(kind, ls)...)
	}
	slices.SortFunc(names, compareNames)
	return slices.Compact(names)
}

// ListenerSetGateway returns the Gateway the parentRef of ls names; false
// when it names another kind.
func ListenerSetGateway(ls *gatewayv1.ListenerSet) (types.NamespacedName, bool) {
	ref := ls.Spec.ParentRef
	if orDefault(ref.Group, gatewayv1.GroupName) != gatewayv1.GroupName || orDefault(ref.Kind, KindGateway) != KindGateway {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: NamespaceOr(ref.Namespace, ls.Namespace), Name: string(ref.Name)}, true
}

// ParentListenerSets returns the ListenerSets that parentRefs of an object
// in namespace name, without duplicates, in order.
func ParentListenerSets(namespace string, refs []gatewayv1.ParentReference) []types.NamespacedName {
	var out []types.NamespacedName
	for _, ref := range refs {
		if IsListenerSetRef(ref) {
			out = uniq(out, types.NamespacedName{Namespace: NamespaceOr(ref.Namespace, namespace), Name: string(ref.Name)})
		}
	}
	return out
}

// IsListenerSetRef reports whether ref names a ListenerSet. The group of a
// parentRef defaults to the Gateway API's.
func IsListenerSetRef(ref gatewayv1.ParentReference) bool {
	return orDefault(ref.Group, gatewayv1.GroupName) == gatewayv1.GroupName && orDefault(ref.Kind, KindGateway) == KindListenerSet
}

// ListenerSetSecrets returns the Secrets the listeners of ls use as
// certificates, without duplicates, in order.
func ListenerSetSecrets(ls *gatewayv1.ListenerSet) []types.NamespacedName {
	var out []types.NamespacedName
	for _, l := range ls.Spec.Listeners {
		if l.TLS == nil {
			continue
		}
		for _, ref := range l.TLS.CertificateRefs {
			if IsSecretRef(ref.Group, ref.Kind) {
				out = uniq(out, types.NamespacedName{Namespace: NamespaceOr(ref.Namespace, ls.Namespace), Name: string(ref.Name)})
			}
		}
	}
	return out
}
