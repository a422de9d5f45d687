package gatewayapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// OrphanListenerSetStatuses returns the statuses of the ListenerSets whose
// parentRef names gateway when no such Gateway exists: Accepted False with
// reason ParentNotAccepted (a Gateway that does not exist is accepted by
// nobody) and Programmed False with reason ParentNotProgrammed, both the
// spec's, and no listener statuses. It returns nil when the Gateway exists,
// gatewire's or another controller's: a Gateway of another class has its
// ListenerSets' status written by its own controller, which gatewire must
// not overwrite. The statuses are keyed under gateway, like those of a
// translated gateway, so that they give way when the Gateway appears.
func OrphanListenerSetStatuses(idx resources.Reader, gateway types.NamespacedName) []*busv1.Status {
	if idx.Gateway(gateway) != nil {
		return nil
	}
	var out []*busv1.Status
	for _, ls := range idx.ListenerSetsFor(gateway) {
		out = append(out, orphanStatus(ls, gateway))
	}
	return out
}

// orphanStatus is the status of one ListenerSet whose parent Gateway does
// not exist.
func orphanStatus(ls *gatewayv1.ListenerSet, gateway types.NamespacedName) *busv1.Status {
	message := fmt.Sprintf("Gateway %s does not exist", gateway)
	var cs conditions
	cs.set(string(gatewayv1.ListenerSetConditionAccepted), false, string(gatewayv1.ListenerSetReasonParentNotAccepted), message)
	cs.set(string(gatewayv1.ListenerSetConditionProgrammed), false, reasonParentNotProgrammed, message)
	return &busv1.Status{
		Object:             objectRef(gatewayv1.GroupName, resources.KindListenerSet, ls.Namespace, ls.Name),
		Gateway:            objectRef(gatewayv1.GroupName, resources.KindGateway, gateway.Namespace, gateway.Name),
		ObservedGeneration: ls.Generation,
		Conditions:         cs.stamp(ls.Generation),
	}
}

// reasonParentNotProgrammed is the spec's reason for a ListenerSet that is
// not Programmed because its parent Gateway is not; v1.6 defines no
// constant for it.
const reasonParentNotProgrammed = "ParentNotProgrammed"
