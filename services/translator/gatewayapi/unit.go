package gatewayapi

import (
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// routeUnit is the translation of one HTTPRoute or GRPCRoute on one
// gateway: its IR routes and backends, where it attaches and its status.
// It is a function of the gateway's listeners (its gatewayCtx), the route,
// the objects the route names (Services, EndpointSlices, ReferenceGrants,
// namespaces) and which listeners refused it for a route of the other kind
// (kindRejected); a unit is reused while all of them are unchanged. Units
// are read-only once built.
type routeUnit struct {
	kind   string
	meta   *metav1.ObjectMeta
	status *busv1.Status
	rules  *httpRules
	// attached are the listeners and hostnames of its accepted parentRefs,
	// in order.
	attached []attachment

	// What it was built from: the context, what it read, and the kind
	// conflicts it lost.
	ctx   *gatewayCtx
	deps  resources.Deps
	kinds string
}

// routeBuilder translates one route against a gateway's context. It reads
// the index through idx (a recording View for a route unit), and keeps the
// backends it resolved for the route.
type routeBuilder struct {
	*gatewayCtx
	idx      resources.Reader
	resolved map[string]resolved
	// kindRejected are the listeners that refuse routes for the hostnames
	// a route of the other kind has (processRouteKindConflicts).
	kindRejected map[routeOnListener]*problem
}

// unitKey names a route of a gateway.
type unitKey struct {
	kind string
	nn   types.NamespacedName
}

// unit returns the route's unit: the one t.memo holds when nothing it was
// built from changed, else a new one from build (which t.memo keeps).
func (t *translation) unit(kind string, meta *metav1.ObjectMeta, build func(*routeBuilder) *routeUnit) *routeUnit {
	k := unitKey{kind: kind, nn: types.NamespacedName{Namespace: meta.Namespace, Name: meta.Name}}
	kinds := t.kindVerdicts(k)
	if t.memo != nil {
		if u := t.memo.units[k]; u != nil && u.ctx == t.gatewayCtx && u.kinds == kinds && u.deps.Unchanged() {
			t.memo.seen[k] = true
			return u
		}
	}
	var u *routeUnit
	if t.memo == nil {
		u = build(&routeBuilder{gatewayCtx: t.gatewayCtx, idx: t.idx, resolved: map[string]resolved{}, kindRejected: t.kindRejected})
	} else {
		deps := resources.Deps{}
		view := t.memo.index.View(&deps)
		view.Route(kind, k.nn)
		u = build(&routeBuilder{gatewayCtx: t.gatewayCtx, idx: view, resolved: map[string]resolved{}, kindRejected: t.kindRejected})
		u.deps = deps
		t.memo.units[k] = u
		t.memo.seen[k] = true
		t.memo.built++
	}
	u.ctx, u.kinds = t.gatewayCtx, kinds
	return u
}

// kindVerdicts names the listeners that refuse route k for a route of the
// other kind, and why: what a unit must be built again for when it changes.
func (t *translation) kindVerdicts(k unitKey) string {
	if len(t.kindRejected) == 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range t.allListeners() {
		if p := t.kindRejected[routeOnListener{kind: k.kind, namespace: k.nn.Namespace, name: k.nn.Name, listener: l}]; p != nil {
			b.WriteString(l.qualifiedName())
			b.WriteByte(0)
			b.WriteString(p.message)
			b.WriteByte(0)
		}
	}
	return b.String()
}
