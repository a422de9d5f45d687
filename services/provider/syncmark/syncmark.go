// Package syncmark writes a provider's sync marks: busv1.SyncMark under
// bus.SyncKey(source) in the resources bucket, SYNCING before the first
// write of a sync (the initial scan or list, a resync, a batch of
// changes) and SYNCED after the last, so that the translator publishes
// nothing from a partial bucket (see the bus contract in package bus).
//
// A Marker is used by one goroutine at a time.
package syncmark

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Marker writes the marks of one provider source.
type Marker struct {
	bus      *bus.Bus
	source   string
	provider string
	started  time.Time
	now      func() time.Time
}

// New returns the Marker of source ("file" or "kubernetes") on b. Its
// marks name this process (host and pid) as their provider.
func New(b *bus.Bus, source string) *Marker {
	host, _ := os.Hostname()
	return &Marker{bus: b, source: source, provider: host + "/" + strconv.Itoa(os.Getpid()), now: time.Now}
}

// Syncing marks the start of a sync that readers wait for at most
// within: a provider that dies mid-sync delays them that long.
func (m *Marker) Syncing(ctx context.Context, within time.Duration) error {
	m.started = m.now()
	return m.put(ctx, &busv1.SyncMark{
		Source: m.source, State: busv1.SyncMark_STATE_SYNCING, Provider: m.provider,
		StartedUnixNano: m.started.UnixNano(), DeadlineUnixNano: m.started.Add(within).UnixNano(),
	})
}

// Synced marks the end of the sync: the bucket holds the source's objects
// objects, up to the bucket's revision now.
func (m *Marker) Synced(ctx context.Context, objects int) error {
	rev, err := m.bus.Revision(ctx, bus.Resources)
	if err != nil {
		return err
	}
	return m.put(ctx, &busv1.SyncMark{
		Source: m.source, State: busv1.SyncMark_STATE_SYNCED, Provider: m.provider,
		StartedUnixNano: m.started.UnixNano(), Revision: rev, Objects: uint64(objects),
	})
}

func (m *Marker) put(ctx context.Context, mark *busv1.SyncMark) error {
	if _, err := m.bus.Put(ctx, bus.Resources, bus.SyncKey(m.source), mark); err != nil {
		return fmt.Errorf("sync mark %s %s: %w", m.source, mark.GetState(), err)
	}
	return nil
}
