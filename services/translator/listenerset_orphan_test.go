package translator

import (
	"testing"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

const orphanCase = "testdata/listenerset/missing-parent.in.yaml"

// goneGateway is the Gateway that ListenerSet infra/orphan names; class
// is its GatewayClass.
func goneGateway(class string) string {
	return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gone
  namespace: infra
spec:
  gatewayClassName: ` + class + `
  allowedListeners:
    namespaces:
      from: Same
  listeners:
  - name: http
    protocol: HTTP
    port: 80
`
}

// acceptedOf returns the status and reason of a status's Accepted condition.
func acceptedOf(e *bus.Entry) (string, string) {
	for _, c := range e.Value.(*busv1.Status).GetConditions() {
		if c.GetType() == "Accepted" {
			return c.GetStatus(), c.GetReason()
		}
	}
	return "", ""
}

// A ListenerSet whose parent Gateway does not exist gets a status from the
// replica that owns the missing gateway's name; the Gateway's translation
// replaces it once the Gateway appears, and it goes when the Gateway turns
// out to be another controller's. A ListenerSet of another controller's
// Gateway gets none.
func TestServiceGivesOrphanListenerSetsAStatus(t *testing.T) {
	b := bustest.New(t)
	putYAML(t, b, orphanCase)
	s, _ := startService(t, b)
	waitReady(t, s)

	orphan := bus.StatusKey("ListenerSet", "infra", "orphan", "infra", "gone")
	e := waitFor(t, b, bus.Status, orphan, func(e *bus.Entry) bool { return e != nil })
	if st, reason := acceptedOf(e); st != "False" || reason != "ParentNotAccepted" {
		t.Errorf("orphan ListenerSet: Accepted %s/%s, want False/ParentNotAccepted", st, reason)
	}
	mine := bus.StatusKey("ListenerSet", "infra", "mine", "infra", "eg")
	waitFor(t, b, bus.Status, mine, func(e *bus.Entry) bool { return e != nil })
	foreign := bus.StatusKey("ListenerSet", "infra", "foreign", "infra", "theirs")
	waitFor(t, b, bus.Status, foreign, func(e *bus.Entry) bool { return e == nil })

	putYAMLString(t, b, goneGateway("gatewire"))
	waitFor(t, b, bus.Status, orphan, func(e *bus.Entry) bool {
		if e == nil {
			return false
		}
		st, reason := acceptedOf(e)
		return st == "True" && reason == "Accepted"
	})

	putYAMLString(t, b, goneGateway("other"))
	waitFor(t, b, bus.Status, orphan, func(e *bus.Entry) bool { return e == nil })
}
