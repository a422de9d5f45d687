package translator

import (
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"

	"github.com/gatewire/gatewire/pkg/bus"
)

// syncGate holds the providers' sync marks (busv1.SyncMark under
// bus.SyncKey in the resources bucket). While a provider says SYNCING, the
// resources may be partial, so the service translates nothing: the changes
// wait, and are translated at once when the last provider says SYNCED.
// A SYNCING mark stops holding at its deadline, so a provider that died
// mid-sync delays the others by a bounded time. It lives in the session
// goroutine.
type syncGate struct {
	marks map[string]*busv1.SyncMark // by source
}

func newSyncGate() *syncGate { return &syncGate{marks: map[string]*busv1.SyncMark{}} }

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
