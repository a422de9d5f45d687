package gatewayapi

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// gatewayCtx is what one Gateway's listeners are: its own and those of the
// ListenerSets it allows, validated, with their certificates and the
// client certificate validation of its frontends. It is built by
// [buildContext] from the Gateway and the objects its listeners name, and
// is read-only once built: routes are translated against it, and it is
// reused while none of its inputs changes.
type gatewayCtx struct {
	// idx is what the listeners are built from; nil once built, so that
	// nothing reads through it afterwards.
	idx     resources.Reader
	name    types.NamespacedName
	gateway *gatewayv1.Gateway
	// controller is gatewire's controller name, the controllerName of the
	// route and policy statuses.
	controller string

	listeners []*listener // one per Gateway listener, in spec order
	// listenerSets are the ListenerSets that name the gateway, in
	// precedence order (processListenerSets).
	listenerSets []*listenerSet
	secrets      map[string]*irv1.Secret // the certificates listeners serve, by name
	// clientCertificate is the certificate the proxy presents to backends
	// over TLS; gatewayUnresolved says why the Gateway's own references do
	// not resolve; frontends are the client certificate validations by
	// field (see gatewayTLS).
	clientCertificate string
	gatewayUnresolved *problem
	frontends         map[string]*frontendValidation
}

// buildContext validates the listeners of gateway gw (named name), reading
// through r; controller is gatewire's controller name.
func buildContext(r resources.Reader, controller string, name types.NamespacedName, gw *gatewayv1.Gateway) *gatewayCtx {
	c := &gatewayCtx{
		idx:        r,
		name:       name,
		gateway:    gw,
		controller: controller,
		secrets:    map[string]*irv1.Secret{},
		frontends:  map[string]*frontendValidation{},
	}
	c.gatewayTLS()
	for i := range gw.Spec.Listeners {
		c.listeners = append(c.listeners, c.newListener(&gw.Spec.Listeners[i], nil))
	}
	markConflicts(c.listeners)
	c.buildListenerSets()
	c.idx = nil
	return c
}

// gatewayRef names the translated Gateway in statuses.
func (c *gatewayCtx) gatewayRef() *busv1.ObjectRef {
	return objectRef(gatewayv1.GroupName, resources.KindGateway, c.name.Namespace, c.name.Name)
}
