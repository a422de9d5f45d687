package gatewayapi

import (
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// Translator translates gateways like [Translate], and keeps what each
// translation built, to reuse what did not change the next time: the
// gateway's listeners (its context) while the Gateway, its class, its
// ListenerSets and the Secrets, ConfigMaps, ReferenceGrants and namespaces
// they name are unchanged, and each route's unit while the route and what
// it names are (see routeUnit). The results are the same as Translate's;
// the property test of the translator checks it. A Translator is tied to
// one Index and is not safe for concurrent use.
type Translator struct {
	index      *resources.Index
	controller string
	gateways   map[types.NamespacedName]*gatewayMemo
}

// NewTranslator returns a Translator of the gateways of idx whose class
// names controller, gatewire's controller name (see pkg/gatewayclass).
func NewTranslator(idx *resources.Index, controller string) *Translator {
	return &Translator{index: idx, controller: controller, gateways: map[types.NamespacedName]*gatewayMemo{}}
}

// Translate translates gateway, as [Translate] does.
func (x *Translator) Translate(gateway types.NamespacedName) *Result {
	m := x.gateways[gateway]
	if m == nil {
		m = &gatewayMemo{index: x.index, units: map[unitKey]*routeUnit{}}
		x.gateways[gateway] = m
	}
	if m.ctx != nil && m.ctxDeps.Unchanged() {
		if ch, now, ok := x.index.ChangesSince(m.cursor); ok {
			if res, ok := m.patched(gateway, ch); ok {
				m.cursor = now
				return res
			}
		}
	}
	m.seen, m.built = map[unitKey]bool{}, 0
	m.cursor = x.index.Clock()
	res, t := run(x.index, x.controller, gateway, m)
	if res == nil {
		delete(x.gateways, gateway)
		return nil
	}
	for k := range m.units {
		if !m.seen[k] {
			delete(m.units, k)
		}
	}
	res.RoutesBuilt = m.built
	m.keep(t, res)
	return res
}

// Forget drops what the Translator keeps of gateway.
func (x *Translator) Forget(gateway types.NamespacedName) { delete(x.gateways, gateway) }

// gatewayMemo is what a Translator keeps of one gateway.
type gatewayMemo struct {
	index   *resources.Index
	ctx     *gatewayCtx
	ctxDeps resources.Deps
	units   map[unitKey]*routeUnit
	// hosts are the virtual hosts of the last translation, by IR listener
	// name and hostname (see port.build).
	hosts map[string]map[string]builtHost
	// seen are the units the translation in progress used; built counts
	// those it built.
	seen  map[unitKey]bool
	built int
	// patch is what a patch of the last translation needs, nil when it
	// cannot be patched; cursor is the index's clock at that translation.
	patch  *patchState
	cursor uint64
}

// context returns the gateway's context, built anew when something it was
// built from changed.
func (m *gatewayMemo) context(controller string, name types.NamespacedName, gw *gatewayv1.Gateway) *gatewayCtx {
	if m.ctx != nil && m.ctxDeps.Unchanged() {
		return m.ctx
	}
	m.ctxDeps.Reset()
	view := m.index.View(&m.ctxDeps)
	view.Gateway(name)
	view.GatewayClass(string(gw.Spec.GatewayClassName))
	m.ctx = buildContext(view, controller, name, gw)
	return m.ctx
}
