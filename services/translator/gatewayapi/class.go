package gatewayapi

import (
	"fmt"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/consts"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// ours reports whether class names controller, gatewire's controller name.
func ours(class *gatewayv1.GatewayClass, controller string) bool {
	return class != nil && string(class.Spec.ControllerName) == controller
}

// supportedBundle is the Gateway API release (major.minor) whose CRDs
// gatewire supports.
var supportedBundle = majorMinor(consts.BundleVersion)

// TranslateClass returns the status of the GatewayClass name, or nil when it
// does not exist or does not name controller, gatewire's controller name
// (see pkg/gatewayclass). The status depends on the
// class alone, so every replica computes the same value.
//
// Accepted is False (InvalidParameters) when the class has a parametersRef:
// gatewire has no class parameters. Its Gateways are still translated, as
// the parameters would change nothing. SupportedVersion says whether gatewire
// supports the installed Gateway API CRDs. The translator does not see
// CRDs; it reads their bundle version from the class's
// gateway.networking.k8s.io/bundle-version annotation when it has one (a
// provider may copy it there), and otherwise reports the version it was
// built for as supported. A bundle of another minor release is not
// supported (UnsupportedVersion), and gatewire does its best with it: the
// class stays Accepted.
func TranslateClass(idx *resources.Index, controller, name string) *busv1.Status {
	class := idx.GatewayClass(name)
	if !ours(class, controller) {
		return nil
	}
	var cs conditions
	if ref := class.Spec.ParametersRef; ref != nil {
		cs.set(string(gatewayv1.GatewayClassConditionStatusAccepted), false, string(gatewayv1.GatewayClassReasonInvalidParameters),
			fmt.Sprintf("parametersRef to %s %q: gatewire has no GatewayClass parameters", ref.Kind, ref.Name))
	} else {
		cs.set(string(gatewayv1.GatewayClassConditionStatusAccepted), true,
			string(gatewayv1.GatewayClassReasonAccepted), "Managed by gatewire")
	}
	bundle, annotated := class.Annotations[consts.BundleVersionAnnotation]
	switch {
	case !annotated:
		cs.set(string(gatewayv1.GatewayClassConditionStatusSupportedVersion), true, string(gatewayv1.GatewayClassReasonSupportedVersion),
			fmt.Sprintf("gatewire supports Gateway API %s; the installed CRD version is not known here", consts.BundleVersion))
	case majorMinor(bundle) == supportedBundle:
		cs.set(string(gatewayv1.GatewayClassConditionStatusSupportedVersion), true, string(gatewayv1.GatewayClassReasonSupportedVersion),
			fmt.Sprintf("Gateway API %s is supported", bundle))
	default:
		cs.set(string(gatewayv1.GatewayClassConditionStatusSupportedVersion), false, string(gatewayv1.GatewayClassReasonUnsupportedVersion),
			fmt.Sprintf("Gateway API CRDs of version %q are installed; gatewire supports %s.x", bundle, supportedBundle))
	}
	return &busv1.Status{
		Object:             objectRef(gatewayv1.GroupName, resources.KindGatewayClass, "", name),
		ObservedGeneration: class.Generation,
		Conditions:         cs.stamp(class.Generation),
	}
}

// majorMinor returns "vX.Y" of a version "vX.Y.Z" (or "X.Y.Z").
func majorMinor(version string) string {
	v := strings.TrimPrefix(version, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return "v" + v
	}
	return "v" + parts[0] + "." + parts[1]
}
