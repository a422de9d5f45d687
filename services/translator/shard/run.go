package shard

import (
	"context"
	"sync"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"

	"github.com/gatewire/gatewire/pkg/bus"
)

// Run writes heartbeats and follows the members bucket until ctx is done;
// then it deletes the replica's key, so that the others take over at once,
// and returns nil. It outlives NATS outages.
func (m *Membership) Run(ctx context.Context) error {
	defer m.leave()
	beats := make(chan beat, 1)
	var wg sync.WaitGroup
	defer wg.Wait() // before leave: no heartbeat may follow the deletion
	wg.Go(func() { m.beat(ctx, beats) })
	st := &tracker{lastSeen: map[string]time.Time{}}
	for ctx.Err() == nil {
		w, err := m.bus.Watch(ctx, bus.Members, memberPattern)
		if err != nil {
			m.log.Warn("cannot watch the members bucket, retrying", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(m.cfg.Heartbeat):
			}
			continue
		}
		m.follow(ctx, w, beats, st)
		w.Stop()
	}
	return nil
}

// tracker is what Run knows of the members; it lives in Run's goroutine.
type tracker struct {
	// lastSeen is when each other member's latest heartbeat arrived.
	lastSeen map[string]time.Time
	// healthySince is since when the replica's own heartbeats go through;
	// zero while they fail.
	healthySince time.Time
	synced       bool
}

// beat is the outcome of one heartbeat write.
type beat struct {
	ok bool
	at time.Time
}

// follow applies the entries of one watch of the members bucket and the
// outcome of the heartbeats, and drops the members whose TTL ran out.
func (m *Membership) follow(ctx context.Context, w *bus.Watcher, beats <-chan beat, st *tracker) {
	expiry := time.NewTimer(time.Hour)
	defer expiry.Stop()
	for {
		expiry.Reset(m.untilExpiry(st, time.Now()))
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			m.apply(st, e)
		case b := <-beats:
			m.health(st, b)
		case <-expiry.C:
		}
		m.expire(st, time.Now())
		if st.synced {
			m.publish(m.viewOf(st), true)
		}
	}
}

// apply records one entry of the members bucket; nil ends the initial sync.
func (m *Membership) apply(st *tracker, e *bus.Entry) {
	if e == nil {
		st.synced = true
		return
	}
	name := memberName(e.Key)
	if name == m.self {
		return
	}
	if e.Op == bus.OpDelete {
		delete(st.lastSeen, name)
		return
	}
	st.lastSeen[name] = time.Now()
}

// beat writes the replica's heartbeat every interval until ctx is done,
// and passes on the outcome of the latest write.
func (m *Membership) beat(ctx context.Context, out chan beat) {
	tick := time.NewTicker(m.cfg.Heartbeat)
	defer tick.Stop()
	for {
		b := beat{ok: m.heartbeat(ctx) == nil, at: time.Now()}
		select { // keep only the latest outcome
		case <-out:
		default:
		}
		out <- b
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// heartbeat writes the replica's heartbeat. It may take up to half the TTL
// (a busy server is slow, not gone); a heartbeat later than that is of no
// use to the others.
func (m *Membership) heartbeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.TTL/2)
	defer cancel()
	_, err := m.bus.Put(ctx, bus.Members, bus.MemberKey(m.cfg.ID), &busv1.Member{
		Id:                m.cfg.ID,
		StartedUnixNano:   m.started.UnixNano(),
		HeartbeatUnixNano: time.Now().UnixNano(),
	})
	return err
}

// health records whether the replica's own heartbeats go through.
func (m *Membership) health(st *tracker, b beat) {
	switch {
	case !b.ok && !st.healthySince.IsZero():
		m.log.Warn("cannot write heartbeat, keeping the members as they are")
		st.healthySince = time.Time{}
	case b.ok && st.healthySince.IsZero():
		st.healthySince = b.at
	}
}

// untilExpiry is how long until the next member's TTL runs out.
func (m *Membership) untilExpiry(st *tracker, now time.Time) time.Duration {
	next := time.Hour
	if !m.healthy(st) {
		return next
	}
	for _, seen := range st.lastSeen {
		next = min(next, later(seen, st.healthySince).Add(m.cfg.TTL).Sub(now))
	}
	return max(next, 0)
}

// expire drops the members not heard from for the TTL, counted from when
// the replica's own heartbeats went through again if that is later.
func (m *Membership) expire(st *tracker, now time.Time) {
	if !m.healthy(st) {
		return
	}
	for name, seen := range st.lastSeen {
		if now.Sub(later(seen, st.healthySince)) >= m.cfg.TTL {
			m.log.Info("translator member expired", "member", name, "last_seen", seen)
			delete(st.lastSeen, name)
		}
	}
}

func (m *Membership) healthy(st *tracker) bool {
	return !st.healthySince.IsZero() && m.bus.Conn().IsConnected()
}

func (m *Membership) viewOf(st *tracker) View {
	others := make([]string, 0, len(st.lastSeen))
	for name := range st.lastSeen {
		others = append(others, name)
	}
	return NewView(m.self, others...)
}

// leave deletes the replica's key so that the others drop it at once.
func (m *Membership) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.Heartbeat)
	defer cancel()
	if err := m.bus.Delete(ctx, bus.Members, bus.MemberKey(m.cfg.ID)); err != nil {
		m.log.Debug("cannot delete own member key; it will expire", "error", err)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
