package shard

import (
	"context"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"

	"github.com/gatewire/gatewire/pkg/bus"
)

// Run writes heartbeats and follows the members bucket until ctx is done;
// then it deletes the replica's key, so that the others take over at once,
// and returns nil. It outlives NATS outages.
func (m *Membership) Run(ctx context.Context) error {
	defer m.leave()
	st := &tracker{lastSeen: map[string]time.Time{}}
	beat := time.NewTicker(m.cfg.Heartbeat)
	defer beat.Stop()
	m.heartbeat(ctx, st)
	for ctx.Err() == nil {
		w, err := m.bus.Watch(ctx, bus.Members, memberPattern)
		if err != nil {
			m.log.Warn("cannot watch the members bucket, retrying", "err", err)
			select {
			case <-ctx.Done():
			case <-beat.C:
				m.heartbeat(ctx, st)
			}
			continue
		}
		m.follow(ctx, w, beat.C, st)
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

// follow applies the entries of one watch of the members bucket, writes a
// heartbeat on every tick and drops the members whose TTL ran out.
func (m *Membership) follow(ctx context.Context, w *bus.Watcher, beat <-chan time.Time, st *tracker) {
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
		case <-beat:
			m.heartbeat(ctx, st)
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

// heartbeat writes the replica's heartbeat and records whether it went
// through.
func (m *Membership) heartbeat(ctx context.Context, st *tracker) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Heartbeat)
	defer cancel()
	now := time.Now()
	_, err := m.bus.Put(ctx, bus.Members, bus.MemberKey(m.cfg.ID), &busv1.Member{
		Id:                m.cfg.ID,
		StartedUnixNano:   m.started.UnixNano(),
		HeartbeatUnixNano: now.UnixNano(),
	})
	switch {
	case err != nil && !st.healthySince.IsZero():
		m.log.Warn("cannot write heartbeat, keeping the members as they are", "err", err)
		st.healthySince = time.Time{}
	case err == nil && st.healthySince.IsZero():
		st.healthySince = now
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
		m.log.Debug("cannot delete own member key; it will expire", "err", err)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
