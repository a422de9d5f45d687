package gatewayapi

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// TestNotProgrammedReachesListenerSets: when the gateway's configuration is
// not pushed, its ListenerSets and their listeners are not Programmed
// either.
func TestNotProgrammedReachesListenerSets(t *testing.T) {
	idx, err := resourcestest.Load(strings.NewReader(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gatewire}
spec: {controllerName: `+gatewayclass.DefaultControllerName+`}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: infra}
spec:
  gatewayClassName: gatewire
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: infra}
spec:
  parentRef: {name: eg}
  listeners: [{name: http, protocol: HTTP, port: 8080}]
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	r := Translate(idx, gatewayclass.DefaultControllerName, types.NamespacedName{Namespace: "infra", Name: "eg"})
	r.NotProgrammed("xDS refused")
	var ls int
	for _, st := range r.Statuses {
		if st.GetObject().GetKind() != resources.KindListenerSet {
			continue
		}
		ls++
		if c := conditions(st.Conditions).get("Programmed"); c.Status != "False" || c.Reason != "Invalid" || c.Message != "xDS refused" {
			t.Errorf("ListenerSet Programmed = %v, want False, Invalid", c)
		}
		if c := conditions(st.Conditions).get("Accepted"); c.Status != "True" {
			t.Errorf("ListenerSet Accepted = %v, want it untouched", c)
		}
		if c := conditions(st.Listeners[0].Conditions).get("Programmed"); c.Status != "False" {
			t.Errorf("listener Programmed = %v, want False", c)
		}
	}
	if ls != 1 {
		t.Fatalf("%d ListenerSet statuses, want 1", ls)
	}
}
