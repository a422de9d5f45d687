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
	// XDS is the gateway's Envoy configuration (the xds bucket), with no
	// source revision yet. It is nil when the IR does not make valid xDS;
	// XDSError then says why, the Gateway is not Programmed, and the
	// previous snapshot stays in place.
	XDS      *busv1.XdsSnapshot
	XDSError error
	// Proxy is what to run for the gateway (the infra bucket), with no
	// source revision yet.
	Proxy *busv1.Proxy
	// Statuses are the statuses the gateway gives (the status bucket): the
	// Gateway's own first, then its routes'.
	Statuses []*busv1.Status
}

// Translate runs the whole translation of one gateway: Gateway API to IR
// and statuses, then IR to a validated xDS snapshot. It returns nil when the
// gateway has no outputs: it does not exist or is not gatewire's. Translate
// only reads idx.
func Translate(idx *resources.Index, gateway types.NamespacedName) *Output {
	res := gatewayapi.Translate(idx, gateway)
	if res == nil {
		return nil
	}
	snap, err := xdsgen.Snapshot(res.IR)
	if err != nil {
		res.NotProgrammed(err.Error())
	}
	return &Output{
		Gateway:  gateway,
		IR:       res.IR,
		XDS:      snap,
		XDSError: err,
		Proxy:    res.Proxy,
		Statuses: res.Statuses,
	}
}
