package translator

import (
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// syncGate holds the providers' sync marks (busv1.SyncMark under
// bus.SyncKey in the resources bucket). While a provider says SYNCING, the
// resources may be partial, so the service translates nothing: the changes
// wait, and are translated at once when the last provider says SYNCED.
// A SYNCING mark stops holding at its deadline, so a provider that died
// mid-sync delays the others by a bounded time. It lives in the session
// goroutine.
//
// A resource key whose value does not decode, and whose object the index
// does not hold from an earlier value (a translator that started after a
// foreign or corrupt write), is unknown, not deleted: translating without
// it could drop the object from every gateway that has it. It holds
// translation the same way, until its owner writes it again (the provider
// repairs its keys within seconds) or undecodableWait has passed; then the
// object is left out, and said so in the log.
type syncGate struct {
	marks map[string]*busv1.SyncMark // by source
	// unknown are the keys that do not decode, with when they stop
	// holding.
	unknown map[string]time.Time
}

// undecodableWait is how long an unknown key holds translation.
const undecodableWait = 30 * time.Second

func newSyncGate() *syncGate {
	return &syncGate{marks: map[string]*busv1.SyncMark{}, unknown: map[string]time.Time{}}
}

// decoded records that key's value decodes, or that it is deleted.
func (g *syncGate) decoded(key string) { delete(g.unknown, key) }

// apply records the mark of an entry whose key is a sync key, and reports
// whether it was one.
func (g *syncGate) apply(e *bus.Entry, kind, source string) bool {
	if kind != bus.SyncKind {
		return false
	}
	m, ok := e.Value.(*busv1.SyncMark)
	if e.Op == bus.OpDelete || !ok || e.Err != nil {
		delete(g.marks, source)
		return true
	}
	g.marks[source] = m
	return true
}

// closed reports whether some provider is syncing at now, and until when
// (the earliest deadline; zero for none).
func (g *syncGate) closed(now time.Time) (bool, time.Time) {
	var until time.Time
	shut := false
	for _, end := range g.unknown {
		if now.Before(end) {
			shut = true
			if until.IsZero() || end.Before(until) {
				until = end
			}
		}
	}
	for _, m := range g.marks {
		if m.GetState() != busv1.SyncMark_STATE_SYNCING {
			continue
		}
		if d := m.GetDeadlineUnixNano(); d != 0 {
			deadline := time.Unix(0, d)
			if !now.Before(deadline) {
				continue
			}
			if until.IsZero() || deadline.Before(until) {
				until = deadline
			}
		}
		shut = true
	}
	return shut, until
}

// syncing lists the sources that are syncing at now, for logs.
func (g *syncGate) syncing(now time.Time) []string {
	var out []string
	for source, m := range g.marks {
		if m.GetState() == busv1.SyncMark_STATE_SYNCING && (m.GetDeadlineUnixNano() == 0 || now.Before(time.Unix(0, m.GetDeadlineUnixNano()))) {
			out = append(out, source)
		}
	}
	return out
}

// logMark logs a provider's mark as it comes.
func (s *Service) logMark(st *session, e *bus.Entry) {
	m, _ := e.Value.(*busv1.SyncMark)
	switch {
	case e.Op == bus.OpDelete || m == nil:
		s.log.Info("provider sync mark removed", "key", e.Key, "revision", e.Revision)
	case m.GetState() == busv1.SyncMark_STATE_SYNCED:
		s.log.Info("provider synced", "source", m.GetSource(), "provider", m.GetProvider(),
			"objects", m.GetObjects(), "revision", e.Revision, "pending_gateways", len(st.gateways))
	default:
		s.log.Info("provider syncing; translation waits", "source", m.GetSource(), "provider", m.GetProvider(),
			"deadline", time.Unix(0, m.GetDeadlineUnixNano()), "revision", e.Revision)
	}
}

// undecodable records a resource key whose value cannot be used. The index
// keeps the object's last value when it has one; else the key is unknown
// and holds translation (see syncGate).
func (s *Service) undecodable(st *session, key, kind, ns, name string, err error) {
	switch {
	case !resources.Known(kind):
		s.log.Warn("resource value does not decode, ignoring it: gatewire does not translate its kind", "key", key, "error", err)
		return
	case st.idx.Has(kind, ns, name):
		s.log.Warn("resource value does not decode, keeping its last value", "key", key, "error", err)
		return
	}
	if _, seen := st.gate.unknown[key]; !seen {
		st.gate.unknown[key] = time.Now().Add(undecodableWait)
		s.log.Error("resource value does not decode and its object is unknown; translation waits for it to be written again",
			"key", key, "error", err, "wait", undecodableWait)
	}
}
