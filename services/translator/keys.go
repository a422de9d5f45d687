package translator

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// classGateway stands for the gateway in the status key of a GatewayClass:
// a class's status depends on no gateway, and "-" is never a Kubernetes
// name, so the key cannot clash with a gateway's.
const classGateway = "-"

// statusKey is the status-bucket key of st, which gateway gives.
func statusKey(st *busv1.Status, gateway types.NamespacedName) string {
	o := st.GetObject()
	return bus.StatusKey(o.GetKind(), o.GetNamespace(), o.GetName(), gateway.Namespace, gateway.Name)
}

// ClassStatusKey is the status-bucket key of the status of GatewayClass
// name: <GatewayClass>._.<name>.-.-
func ClassStatusKey(name string) string {
	return bus.StatusKey(resources.KindGatewayClass, "", name, classGateway, classGateway)
}
