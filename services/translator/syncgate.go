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
// repairs its keys within seconds) or the hold's budget has passed; then
// the object is left out, and said so in the log.
//
// The hold is bounded so that whoever can write the resources bucket
// cannot freeze translation by writing garbage to a new key now and then:
//   - Only keys that are unknown before the session's first translation
//     hold. Those are the ones that could matter: the outputs on the bus
//     may come from an earlier run that knew the object. Once the session
//     has translated its gateways, every output it owns comes from its
//     own index, which never held an unknown key's object, so leaving
//     the object out loses nothing: such a key is logged and reported
//     (badvalues.go), and translation goes on.
//   - The hold is one budget per session, undecodableWait from the first
//     unknown key, not a wait per key: more unknown keys do not make it
//     longer.
//
// So an undecodable key delays a session's first translation by at most
// undecodableWait (30 s), and later translations not at all. (A
// session is one watch of the resources bucket: a translator's start, or
// a watch reopened after NATS was lost.)
type syncGate struct {
	marks map[string]*busv1.SyncMark // by source
	// unknown are the keys that do not decode and hold translation.
	unknown map[string]struct{}
	// wait is the hold's budget, and holdUntil when it ends (zero until a
	// key is unknown).
	wait      time.Duration
	holdUntil time.Time
	// translated is set once the session has translated: unknown keys
	// hold no more.
	translated bool
}

// undecodableWait is the budget of the hold of unknown keys.
const undecodableWait = 30 * time.Second

func newSyncGate(wait time.Duration) *syncGate {
	return &syncGate{marks: map[string]*busv1.SyncMark{}, unknown: map[string]struct{}{}, wait: wait}
}

// holdUnknown records key as unknown at now, and reports whether it holds
// translation, and until when.
func (g *syncGate) holdUnknown(key string, now time.Time) (bool, time.Time) {
	if g.translated {
		return false, time.Time{}
	}
	if g.holdUntil.IsZero() {
		g.holdUntil = now.Add(g.wait)
	}
	g.unknown[key] = struct{}{}
	return now.Before(g.holdUntil), g.holdUntil
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
	if len(g.unknown) > 0 && !g.translated && now.Before(g.holdUntil) {
		shut, until = true, g.holdUntil
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
	if _, seen := st.gate.unknown[key]; seen {
		return
	}
	holds, until := st.gate.holdUnknown(key, time.Now())
	switch {
	case holds:
		s.log.Error("resource value does not decode and its object is unknown; translation waits for it to be written again",
			"key", key, "error", err, "until", until)
	case st.gate.translated:
		s.log.Error("resource value does not decode and its object is unknown; translating without it, as before it was written",
			"key", key, "error", err)
	default:
		s.log.Error("resource value does not decode and its object is unknown; translating without it: the wait for unknown keys is over",
			"key", key, "error", err, "waited_since", until.Add(-st.gate.wait))
	}
}
