package gatewayapi

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditions is an ordered list of conditions, at most one per type.
type conditions []*busv1.Condition

// set adds the condition typ, or replaces the one of the same type in place.
func (cs *conditions) set(typ string, ok bool, reason, message string) {
	c := &busv1.Condition{Type: typ, Status: conditionStatus(ok), Reason: reason, Message: message}
	for i, old := range *cs {
		if old.Type == typ {
			(*cs)[i] = c
			return
		}
	}
	*cs = append(*cs, c)
}

// get returns the condition typ, or nil.
func (cs conditions) get(typ string) *busv1.Condition {
	for _, c := range cs {
		if c.Type == typ {
			return c
		}
	}
	return nil
}

// stamp sets the observed generation of every condition and returns them.
func (cs conditions) stamp(generation int64) []*busv1.Condition {
	for _, c := range cs {
		c.ObservedGeneration = generation
	}
	return cs
}

func conditionStatus(ok bool) string {
	if ok {
		return string(metav1.ConditionTrue)
	}
	return string(metav1.ConditionFalse)
}

// objectRef names a Kubernetes object in a Status.
func objectRef(group, kind, namespace, name string) *busv1.ObjectRef {
	return &busv1.ObjectRef{Group: group, Kind: kind, Namespace: namespace, Name: name}
}

// problem is why a reference or value could not be used: a condition reason
// from the Gateway API and a message that names the bad input.
type problem struct {
	reason  string
	message string
}
