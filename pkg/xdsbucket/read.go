package xdsbucket

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// readAttempts bounds how often Read starts over when the gateway's commit
// changes while it reads.
const readAttempts = 5

// Read returns the snapshot of one gateway as the bucket holds it, with its
// resources inline. It fails with [ErrNoCommit] when the gateway has no
// commit, and with [ErrIncomplete] when the resources never matched the
// commit while it read.
func Read(ctx context.Context, b *bus.Bus, gatewayKey string) (*busv1.XdsSnapshot, error) {
	var last error
	for range readAttempts {
		snap, err := readOnce(ctx, b, gatewayKey)
		if err == nil || !errors.Is(err, ErrIncomplete) {
			return snap, err
		}
		last = err
	}
	return nil, last
}

func readOnce(ctx context.Context, b *bus.Bus, gatewayKey string) (*busv1.XdsSnapshot, error) {
	w, err := b.Watch(ctx, bus.XDS, GatewayPattern(gatewayKey))
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	st := NewStage(nil)
	for e := range w.Updates() {
		if e == nil {
			break
		}
		if r := st.Apply(e); r.Err != nil && !errors.Is(r.Err, ErrIncomplete) {
			return nil, fmt.Errorf("xds bucket %s: %w", e.Key, r.Err)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	commit, err := b.Get(ctx, bus.XDS, gatewayKey)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNoCommit, gatewayKey)
	}
	if err != nil {
		return nil, err
	}
	r := st.Apply(commit)
	if r.Snapshot == nil {
		return nil, r.Err
	}
	return r.Snapshot, nil
}
