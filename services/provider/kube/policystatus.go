package kube

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/provider/status"
)

// policyAncestors sets the status.ancestors of a BackendTLSPolicy from its
// entries, one per Gateway whose routes use a Service the policy applies
// to (status.PolicyAncestors says how they merge), and reports whether it
// changed.
func policyAncestors(obj client.Object, es []status.Entry, controllerName string, now time.Time) bool {
	p := obj.(*gatewayv1.BackendTLSPolicy)
	return assign(&p.Status.Ancestors, status.PolicyAncestors(p.Status.Ancestors, es, controllerName, now))
}
