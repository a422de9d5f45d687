package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// targetsNotFound records the policies that target a Service the gateway
// uses only by sectionNames that Service does not have: they apply to no
// port, so they are not accepted (TargetNotFound), with the gateway as
// ancestor. A policy that names a port the Service has, but the gateway
// does not use, has nothing to do with the gateway and gets no status
// from it.
func (t *translation) targetsNotFound(services []types.NamespacedName, states map[types.NamespacedName]*policyState) {
	for _, svc := range services {
		service := t.idx.Service(svc)
		if service == nil {
			continue
		}
		for _, p := range t.idx.BackendTLSPoliciesFor(svc) {
			nn := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
			if states[nn] != nil {
				continue
			}
			missing, ok := unknownSections(p, svc, service.Spec.Ports)
			if !ok {
				continue
			}
			st := t.evaluatePolicy(p)
			st.invalid = &problem{string(gatewayv1.PolicyReasonTargetNotFound),
				fmt.Sprintf("Service %s has no port named %s", svc, strings.Join(missing, ", "))}
			states[nn] = st
		}
	}
}

// unknownSections returns the sectionNames by which p targets svc, and
// true when every targetRef of p for svc names a section and none of them
// is the name of a port of svc.
func unknownSections(p *gatewayv1.BackendTLSPolicy, svc types.NamespacedName, ports []corev1.ServicePort) ([]string, bool) {
	var missing []string
	for _, ref := range p.Spec.TargetRefs {
		if ref.Group != "" || ref.Kind != resources.KindService || string(ref.Name) != svc.Name {
			continue
		}
		if ref.SectionName == nil || *ref.SectionName == "" {
			return nil, false
		}
		section := string(*ref.SectionName)
		if slices.ContainsFunc(ports, func(sp corev1.ServicePort) bool { return sp.Name == section }) {
			return nil, false
		}
		missing = append(missing, fmt.Sprintf("%q", section))
	}
	return missing, len(missing) > 0
}
