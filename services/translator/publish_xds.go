package translator

import (
	"context"
	"crypto/sha256"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	"github.com/gatewire/gatewire/services/translator/xdsgen"
)

// writeXDS writes a gateway's resources to the xds bucket in its layout
// (package xdsbucket): in one batch, the resources whose keys do not hold
// them yet and the purge of the keys of resources it no longer has; then
// the commit, with a compare-and-set on the source revision. A key holds
// a resource when the ledger knows its digest. Only what changed since the
// last build is looked at, so a route edit writes one virtual host and the
// commit; with all (the gateway's first build of the session, or a
// foreign write to repair), every key is.
func (s *Service) writeXDS(ctx context.Context, st *session, gw types.NamespacedName, build *xdsgen.Build, all bool) error {
	gwKey := bus.GatewayKey(gw.Namespace, gw.Name)
	changed, removed := build.Changed, build.Removed
	if all || build.Full || !st.built[gw] {
		changed, removed = build.Set.Suffixes(), nil
		keep := make(map[string]struct{}, len(changed))
		for _, suffix := range changed {
			keep[gwKey+"."+suffix] = struct{}{}
		}
		for key := range st.ledger.xdsKeys[gw] {
			if _, ok := keep[key]; !ok {
				removed = append(removed, key[len(gwKey)+1:])
			}
		}
	}
	changed, removed = withForeign(st, gwKey, build, changed, removed)
	written := map[string]fingerprint{}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	batch := s.bus.Batch(bus.XDS)
	for _, suffix := range changed {
		key := gwKey + "." + suffix
		r := build.Set.Get(suffix)
		fp := resourceFingerprint(suffix, r.GetVersion())
		if st.ledger.unchanged(bus.XDS, key, fp) {
			continue
		}
		written[key] = fp
		batch.Put(ctx, key, r, bus.WithSourceRevision(st.revision),
			bus.WithHeader(headerDigest, fp.String()), bus.WithHeader(headerWriter, s.id))
	}
	var purged []string
	for _, suffix := range removed {
		key := gwKey + "." + suffix
		if !st.ledger.has(bus.XDS, key) {
			continue
		}
		purged = append(purged, key)
		batch.Purge(ctx, key, bus.MarkerTTL, bus.WithSourceRevision(st.revision), bus.WithHeader(headerWriter, s.id))
	}
	if err := batch.Wait(ctx); err != nil {
		return err
	}
	for key, fp := range written {
		st.ledger.wrote(bus.XDS, key, fp, batch.Revisions[key], st.revision, false)
	}
	for _, key := range purged {
		st.ledger.deleted(bus.XDS, key)
	}
	st.built[gw] = true
	return s.put(ctx, st, bus.XDS, gwKey, build.Commit)
}

// withForeign adds to changed and removed the suffixes of the gateway's
// keys another writer wrote (see session.foreignWrite), and forgets them:
// the ledger then tells whether each holds what the build has.
func withForeign(st *session, gwKey string, build *xdsgen.Build, changed, removed []string) ([]string, []string) {
	prefix := gwKey + "."
	for k := range st.foreign {
		if k.bucket != bus.XDS || len(k.key) <= len(prefix) || k.key[:len(prefix)] != prefix {
			continue
		}
		delete(st.foreign, k)
		suffix := k.key[len(prefix):]
		if build.Set.Get(suffix) != nil {
			changed = append(changed, suffix)
		} else {
			removed = append(removed, suffix)
		}
	}
	return changed, removed
}

// removeXDS deletes a gateway's commit, so that the xds service stops
// serving it at once, then purges its resources.
func (s *Service) removeXDS(ctx context.Context, st *session, gw types.NamespacedName) error {
	if err := s.delete(ctx, st, bus.XDS, bus.GatewayKey(gw.Namespace, gw.Name)); err != nil {
		return err
	}
	keys := st.ledger.xdsKeys[gw]
	if len(keys) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	batch := s.bus.Batch(bus.XDS)
	var purged []string
	for key := range keys {
		purged = append(purged, key)
		batch.Purge(ctx, key, bus.MarkerTTL, bus.WithSourceRevision(st.revision), bus.WithHeader(headerWriter, s.id))
	}
	if err := batch.Wait(ctx); err != nil {
		return err
	}
	for _, key := range purged {
		st.ledger.deleted(bus.XDS, key)
	}
	return nil
}

// resourceFingerprint is the fingerprint of an xds resource key: its
// digest, which hashes the key and the resource's version (a hash of its
// value), so that nothing is hashed twice.
func resourceFingerprint(suffix, version string) fingerprint {
	d := xdsbucket.Digest(suffix, version)
	return sha256.Sum256(d[:])
}
