package xds

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Backoff between attempts to open the watch of the xds bucket.
const (
	minWatchBackoff = 100 * time.Millisecond
	maxWatchBackoff = 5 * time.Second
)

// feed keeps the store equal to the xds bucket. It is run by one
// goroutine.
type feed struct {
	bus       *bus.Bus
	store     *store
	log       *slog.Logger
	metrics   *metrics
	tracer    trace.Tracer
	dataPlane *dataPlane // told of deleted gateways

	synced atomic.Bool
	// served maps each gateway key whose snapshot from the bucket is in
	// the store to its node cluster; deleted gateways (served the empty
	// snapshot) are not in it.
	served map[string]string
	stage  *xdsbucket.Stage
	check  *checker
}

func newFeed(b *bus.Bus, st *store, log *slog.Logger, m *metrics, tracer trace.Tracer, dp *dataPlane) *feed {
	return &feed{bus: b, store: st, log: log, metrics: m, tracer: tracer, dataPlane: dp, served: map[string]string{}}
}

// run follows the xds bucket until ctx is done. A watch that cannot be
// opened is retried with backoff; a watch that ends while ctx is alive is
// opened again, and after its initial sync the gateways no longer in the
// bucket are emptied. Nothing is emptied because NATS is away: the store
// keeps serving what it has.
func (f *feed) run(ctx context.Context) {
	backoff := minWatchBackoff
	for ctx.Err() == nil {
		w, err := f.bus.Watch(ctx, bus.XDS, ">")
		if err != nil {
			f.log.Warn("xds bucket watch failed", "error", err, "retry", backoff)
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, maxWatchBackoff)
			continue
		}
		backoff = minWatchBackoff
		f.follow(ctx, w)
		w.Stop()
		if ctx.Err() == nil {
			f.log.Warn("xds bucket watch ended; reopening it")
			sleep(ctx, minWatchBackoff)
		}
	}
}

// follow applies the entries of one watch until it ends. Each watch reads
// the bucket from the start into a new stage.
func (f *feed) follow(ctx context.Context, w *bus.Watcher) {
	f.check = newChecker()
	f.stage = xdsbucket.NewStage(f.check.validate, xdsbucket.InParts())
	inSync := map[string]bool{} // commits seen during the initial sync; nil after it
	for e := range w.Updates() {
		if e == nil {
			f.sweep(ctx, inSync)
			inSync = nil
			if !f.synced.Swap(true) {
				f.log.Info("xds bucket synced", "gateways", len(f.served))
			}
			continue
		}
		if inSync != nil {
			if gw, suffix, err := xdsbucket.ParseKey(e.Key); err == nil && suffix == "" && e.Op != bus.OpDelete {
				inSync[gw] = true
			}
		}
		f.apply(ctx, e)
	}
}

// sweep empties the gateways that were served before a watch was reopened
// and whose commit was not in its initial sync: they were deleted meanwhile.
func (f *feed) sweep(ctx context.Context, seen map[string]bool) {
	for key, nodeCluster := range f.served {
		if !seen[key] {
			f.remove(ctx, key, nodeCluster)
		}
	}
}

// apply takes one entry through the stage, and serves the snapshot it
// completes. A refused value, or a commit whose resources are not all
// there, is logged and counted; the gateway's previous snapshot stays.
func (f *feed) apply(ctx context.Context, e *bus.Entry) {
	gw, suffix, err := xdsbucket.ParseKey(e.Key)
	if err != nil {
		f.reject(e, "", err)
		return
	}
	nodeCluster, err := nodeClusterOf(gw)
	if err != nil {
		f.reject(e, "", err)
		return
	}
	if suffix == "" && e.Op != bus.OpDelete && e.Err == nil {
		if x, ok := e.Value.(*busv1.XdsSnapshot); ok && x.GetNodeCluster() != nodeCluster {
			f.reject(e, nodeCluster, fmt.Errorf("node_cluster %q does not match the key", x.GetNodeCluster()))
			return
		}
	}
	f.check.entry(gw, suffix)
	r := f.stage.Apply(e)
	if r.Err != nil {
		f.reject(e, nodeCluster, r.Err)
	}
	switch {
	case r.Deleted:
		f.remove(e.Context(ctx), gw, nodeCluster)
	case r.Snapshot != nil:
		if err := f.check.consistent(gw); err != nil {
			f.reject(e, nodeCluster, err)
			return
		}
		f.set(e.Context(ctx), e, gw, nodeCluster, r.Snapshot)
	}
}

// set builds and serves a gateway's snapshots, in one "xds push" span
// that continues the trace of the bus entry.
func (f *feed) set(ctx context.Context, e *bus.Entry, gw, nodeCluster string, x *busv1.XdsSnapshot) {
	_, span := f.tracer.Start(ctx, "xds push", trace.WithAttributes(
		attribute.String("gatewire.gateway", nodeCluster), attribute.String("gatewire.xds_version", x.GetVersion())))
	defer span.End()
	prev := f.store.snapshot(nodeCluster, false)
	if _, served := f.served[gw]; !served {
		prev = nil // the empty snapshot of a deleted gateway shares nothing
	}
	envoy, proxyless, err := buildSnapshots(x, prev, f.store.snapshot(nodeCluster, true))
	if err != nil {
		f.reject(e, nodeCluster, err)
		span.RecordError(err)
		return
	}
	changed := 0
	for i := range numTypes {
		if prev == nil || prev.types[i] != envoy.types[i] {
			changed++
		}
	}
	f.served[gw] = nodeCluster
	woken := f.store.set(nodeCluster, envoy, proxyless)
	span.SetAttributes(attribute.Int("gatewire.types_changed", changed), attribute.Int("gatewire.streams", woken))
	f.log.Info("snapshot set", "gateway", nodeCluster, "version", x.GetVersion(),
		"source_revision", x.GetSourceRevision(), "revision", e.Revision, "types_changed", changed,
		"streams", woken, "proxyless_listeners", len(x.GetProxylessListeners()))
}

// remove replaces a deleted gateway's snapshots with empty ones at the
// version "deleted": its connected clients drop what they had of it, and
// clients that connect later get nothing to serve. Forgetting the
// snapshot instead would leave connected clients with their old
// configuration.
func (f *feed) remove(ctx context.Context, key, nodeCluster string) {
	_, span := f.tracer.Start(ctx, "xds push", trace.WithAttributes(
		attribute.String("gatewire.gateway", nodeCluster), attribute.String("gatewire.xds_version", deletedVersion)))
	defer span.End()
	delete(f.served, key)
	f.store.set(nodeCluster, emptySnapshot(deletedVersion), emptySnapshot(deletedVersion))
	// After the snapshot changed: a NACK of the old version seen before it
	// is forgotten, one seen after it is not recorded.
	f.dataPlane.removed(nodeCluster)
	f.log.Info("snapshot emptied: gateway deleted", "gateway", nodeCluster, "key", key, "version", deletedVersion)
}

// reject logs and counts an entry that is not served. The error names at
// most a few resources.
func (f *feed) reject(e *bus.Entry, nodeCluster string, err error) {
	f.metrics.reject(f.store.label(nodeCluster))
	f.log.Warn("snapshot rejected; the previous one stays served", "key", e.Key,
		"gateway", nodeCluster, "revision", e.Revision, "error", err)
}

// nodeClusterOf is the node.cluster of the Envoys of the gateway whose
// commit is stored under key: <namespace>/<gateway>.
func nodeClusterOf(key string) (string, error) {
	ns, name, err := bus.ParseGatewayKey(key)
	if err != nil {
		return "", err
	}
	return ns + "/" + name, nil
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
