package xdsbucket

import (
	"context"
	"fmt"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Write stores an inline snapshot under gatewayKey in the bucket's layout:
// every resource in one batch, the purge of the gateway's keys the
// snapshot does not hold, then the commit. The commit keeps snap's
// version and its types' versions where snap sets them; a type without a
// version is served at snap's version, as in a snapshot without type
// versions. An empty snap version takes the Set's versions. It reads the gateway's keys first and writes them all
// again; a writer that keeps what it wrote (the translator) writes only
// what changed instead.
func Write(ctx context.Context, b *bus.Bus, gatewayKey string, snap *busv1.XdsSnapshot, opts ...bus.PutOption) (*busv1.XdsSnapshot, error) {
	set, err := Split(snap)
	if err != nil {
		return nil, fmt.Errorf("xdsbucket: %s: %w", gatewayKey, err)
	}
	old, err := b.Keys(ctx, bus.XDS, GatewayPattern(gatewayKey))
	if err != nil {
		return nil, err
	}
	batch := b.Batch(bus.XDS)
	keep := map[string]bool{}
	for _, suffix := range set.Suffixes() {
		keep[gatewayKey+"."+suffix] = true
		batch.Put(ctx, gatewayKey+"."+suffix, set.Get(suffix), opts...)
	}
	for _, key := range old {
		if !keep[key] {
			batch.Purge(ctx, key, bus.MarkerTTL, opts...)
		}
	}
	if err := batch.Wait(ctx); err != nil {
		return nil, err
	}
	commit := set.Commit(snap.GetNodeCluster(), snap.GetSourceRevision())
	if snap.GetVersion() != "" {
		commit.Version = snap.GetVersion()
	}
	versions := map[string]string{}
	for _, t := range snap.GetResources() {
		versions[t.GetTypeUrl()] = t.GetVersion()
	}
	for _, t := range commit.GetResources() {
		switch v := versions[t.GetTypeUrl()]; {
		case v != "":
			t.Version = v
		case snap.GetVersion() != "":
			t.Version = snap.GetVersion()
		}
	}
	if _, err := b.Put(ctx, bus.XDS, gatewayKey, commit, opts...); err != nil {
		return nil, err
	}
	return commit, nil
}

// Remove deletes a gateway's commit, then purges its resources.
func Remove(ctx context.Context, b *bus.Bus, gatewayKey string) error {
	if err := b.Delete(ctx, bus.XDS, gatewayKey); err != nil {
		return err
	}
	keys, err := b.Keys(ctx, bus.XDS, GatewayPattern(gatewayKey))
	if err != nil {
		return err
	}
	batch := b.Batch(bus.XDS)
	for _, key := range keys {
		batch.Purge(ctx, key, bus.MarkerTTL)
	}
	return batch.Wait(ctx)
}

// CommitPattern matches the commits of the bucket and nothing else.
const CommitPattern = "*.*"
