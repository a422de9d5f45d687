package gatewayapi

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// ours reports whether class is managed by gatewire.
func ours(class *gatewayv1.GatewayClass) bool {
	return class != nil && class.Spec.ControllerName == ControllerName
}

// TranslateClass returns the status of the GatewayClass name, or nil when it
// does not exist or is not managed by gatewire. The status depends on the
// class alone, so every replica computes the same value. gatewire has no
// class parameters yet: spec.parametersRef is not read.
func TranslateClass(idx *resources.Index, name string) *busv1.Status {
	class := idx.GatewayClass(name)
	if !ours(class) {
		return nil
	}
	var cs conditions
	cs.set(string(gatewayv1.GatewayClassConditionStatusAccepted), true,
		string(gatewayv1.GatewayClassReasonAccepted), "Managed by gatewire")
	return &busv1.Status{
		Object:             objectRef(gatewayv1.GroupName, resources.KindGatewayClass, "", name),
		ObservedGeneration: class.Generation,
		Conditions:         cs.stamp(class.Generation),
	}
}
