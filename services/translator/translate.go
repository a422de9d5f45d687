package translator

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/services/translator/gatewayapi"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/xdsgen"
)

// Output is everything the translator publishes for one gateway. It is owned
// by the caller.
type Output struct {
	Gateway types.NamespacedName
	// IR is what the gateway means (the ir bucket).
	IR *irv1.Gateway
	// Build is the gateway's Envoy configuration: its resources, one per
	// key of the xds bucket, and its commit (no source revision yet). It
	// is nil when the IR does not make valid xDS; XDSError then says why,
	// the Gateway is not Programmed, and the previous snapshot stays in
	// place. Its set belongs to the translator that built it and stays
	// valid until the gateway's next translation.
	Build    *xdsgen.Build
	XDSError error
	// XDS is the same configuration with its resources inline, as
	// [Translate] gives it; a session's incremental translations leave it
	// nil.
	XDS *busv1.XdsSnapshot
	// Proxy is what to run for the gateway (the infra bucket), with no
	// source revision yet.
	Proxy *busv1.Proxy
	// Statuses are the statuses the gateway gives (the status bucket): the
	// Gateway's own first, then its routes'.
	Statuses []*busv1.Status
	// RoutesBuilt is how many routes were translated again; the others'
	// translations were reused. Patched is set when the last translation
	// was patched with them, instead of the gateway walked again.
	RoutesBuilt int
	Patched     bool
}

// Translate runs the whole translation of one gateway: Gateway API to IR
// and statuses, then IR to a validated xDS snapshot, with nothing reused.
// It returns nil when the gateway has no outputs: it does not exist or its
// class does not name controller, gatewire's controller name (see
// pkg/gatewayclass). Translate only reads idx.
func Translate(idx *resources.Index, controller string, gateway types.NamespacedName) *Output {
	out := newTranslator(idx, controller).translate(gateway)
	if out != nil && out.Build != nil {
		snap, err := out.Build.Set.Assemble(out.Build.Commit)
		if err != nil {
			out.Build, out.XDSError = nil, err
		}
		out.XDS = snap
	}
	return out
}

// translator translates the gateways of one index again and again,
// reusing what did not change: the listeners and route units of
// gatewayapi.Translator, the encoded resources of a Builder per gateway.
// Its results are those of Translate (the incremental-equals-full property
// test checks it). A translator is not safe for concurrent use.
type translator struct {
	api      *gatewayapi.Translator
	builders map[types.NamespacedName]*xdsgen.Builder
}

func newTranslator(idx *resources.Index, controller string) *translator {
	return &translator{api: gatewayapi.NewTranslator(idx, controller), builders: map[types.NamespacedName]*xdsgen.Builder{}}
}

// translate translates one gateway; nil when it has no outputs.
func (x *translator) translate(gateway types.NamespacedName) *Output {
	res := x.api.Translate(gateway)
	if res == nil {
		delete(x.builders, gateway)
		return nil
	}
	b := x.builders[gateway]
	if b == nil {
		b = xdsgen.NewBuilder()
		x.builders[gateway] = b
	}
	build, err := b.Build(res.IR)
	if err != nil {
		res.NotProgrammed(err.Error())
		build = nil
	}
	return &Output{
		Gateway:     gateway,
		IR:          res.IR,
		Build:       build,
		XDSError:    err,
		Proxy:       res.Proxy,
		Statuses:    res.Statuses,
		RoutesBuilt: res.RoutesBuilt,
		Patched:     res.Patched,
	}
}

// forget drops what the translator keeps of gateway.
func (x *translator) forget(gateway types.NamespacedName) {
	x.api.Forget(gateway)
	delete(x.builders, gateway)
}
