package translator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// Bad values. A resource key whose value does not decode (corrupt, foreign,
// too large) is reported on the status of every gateway the object is
// known to touch: those the status bucket holds a status of the object
// for, when the value went bad. The Gateway gets the condition
// [ConditionResourcesDecoded] False, reason [ReasonUndecodableValue],
// naming the keys, until each is written again or deleted; and the
// object's own status entries are kept, not deleted, while its value is
// bad, since the object may well still exist. A key whose object no
// status names (a new object, or one that touched no gateway) is only
// logged and counted (gatewire_bus_bad_values_total).
const (
	ConditionResourcesDecoded = "gatewire.io/ResourcesDecoded"
	ReasonUndecodableValue    = "UndecodableValue"
)

// badValue is a resource key whose value does not decode.
type badValue struct {
	err      error
	gateways []types.NamespacedName
}

// badValues are the resource keys of the session whose values do not
// decode. They live in the session goroutine.
type badValues map[string]*badValue

// badValue records an entry of the resources bucket whose value cannot be
// used: the index and the sync gate learn of it (see syncGate), and the
// gateways of its object say so.
func (s *Service) badValue(ctx context.Context, st *session, e *bus.Entry, kind, ns, name string, err error) {
	s.undecodable(st, e.Key, kind, ns, name, err)
	if resources.Known(kind) {
		s.recordBad(e.Context(ctx), st, e.Key, err)
	}
}

// decodes records that key's value decodes again, or is deleted.
func (s *Service) decodes(ctx context.Context, st *session, key string) {
	st.gate.decoded(key)
	s.recordGood(ctx, st, key)
}

// recordBad notes that key's value does not decode, and marks the
// gateways that must say so.
func (s *Service) recordBad(ctx context.Context, st *session, key string, err error) {
	bad := st.bad[key]
	if bad == nil {
		bad = &badValue{gateways: st.ledger.gatewaysOf(key)}
		st.bad[key] = bad
	}
	bad.err = err
	for _, gw := range bad.gateways {
		st.mark(ctx, gw, workFull)
	}
}

// recordGood notes that key's value decodes again, or is deleted.
func (s *Service) recordGood(ctx context.Context, st *session, key string) {
	bad := st.bad[key]
	if bad == nil {
		return
	}
	delete(st.bad, key)
	s.log.Info("resource value decodes again", "key", key)
	for _, gw := range bad.gateways {
		st.mark(ctx, gw, workFull)
	}
}

// gatewaysOf lists the gateways that hold a status of the object of
// resource key.
func (l *ledger) gatewaysOf(key string) []types.NamespacedName {
	var out []types.NamespacedName
	for gw, keys := range l.statusKeys {
		for k := range keys {
			if strings.HasPrefix(k, key+".") && strings.Count(k, ".") == 4 {
				out = append(out, gw)
				break
			}
		}
	}
	return out
}

// keepsStatus reports whether status key k must stay: its object's value
// does not decode.
func (st *session) keepsStatus(k string) bool {
	for key := range st.bad {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// withBadValues returns out with the condition on its Gateway's status
// when values of objects it touches do not decode. out's statuses are not
// changed: the Gateway's is copied.
func (st *session) withBadValues(out *Output) *Output {
	var keys []string
	for key, bad := range st.bad {
		if slices.Contains(bad.gateways, out.Gateway) {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 || len(out.Statuses) == 0 {
		return out
	}
	slices.Sort(keys)
	var msg strings.Builder
	msg.WriteString("values in the resources bucket do not decode, and translation goes on without them until they are written again: ")
	for i, key := range keys {
		if i > 0 {
			msg.WriteString("; ")
		}
		fmt.Fprintf(&msg, "%s (%v)", key, st.bad[key].err)
	}
	gw := proto.Clone(out.Statuses[0]).(*busv1.Status)
	gw.Conditions = append(gw.Conditions, &busv1.Condition{
		Type: ConditionResourcesDecoded, Status: "False", Reason: ReasonUndecodableValue,
		Message: msg.String(), ObservedGeneration: gw.GetObservedGeneration(),
	})
	copied := *out
	copied.Statuses = append([]*busv1.Status{gw}, out.Statuses[1:]...)
	return &copied
}
