package xds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Backoff between attempts to open the watch of the xds bucket.
const (
	minWatchBackoff = 100 * time.Millisecond
	maxWatchBackoff = 5 * time.Second
)

// feed keeps the snapshot cache equal to the xds bucket. It is run by one
// goroutine; the cache it writes is safe for concurrent use by the gRPC
// streams.
type feed struct {
	bus      *bus.Bus
	cache    cache.SnapshotCache
	log      *slog.Logger
	rejected metric.Int64Counter
	// dataPlane is told of deleted gateways.
	dataPlane *dataPlane

	synced atomic.Bool
	// served maps each bucket key that has a snapshot from the bucket in
	// the cache to its node cluster; deleted gateways (served the empty
	// snapshot) are not in it. Only the feed goroutine touches it.
	served map[string]string
}

// run follows the xds bucket until ctx is done. A watch that cannot be
// opened is retried with backoff; a watch that ends while ctx is alive is
// opened again, and after its initial sync the gateways no longer in the
// bucket are emptied. Nothing is emptied because NATS is away: the cache
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

// follow applies the entries of one watch until it ends. The bucket holds
// one key per resource and a commit per gateway (package xdsbucket); a
// stage assembles each commit with its resources, and what it assembles
// is applied as a whole snapshot.
func (f *feed) follow(ctx context.Context, w *bus.Watcher) {
	inSync := map[string]bool{} // keys seen during the initial sync; nil after it
	stage := xdsbucket.NewStage(nil)
	for e := range w.Updates() {
		if e == nil {
			f.sweep(ctx, inSync)
			inSync = nil
			if !f.synced.Swap(true) {
				f.log.Info("xds bucket synced", "gateways", len(f.served))
			}
			continue
		}
		r := stage.Apply(e)
		switch {
		case r.Snapshot != nil:
			if inSync != nil {
				inSync[r.Gateway] = true
			}
			f.apply(ctx, &bus.Entry{Bucket: e.Bucket, Key: r.Gateway, Revision: e.Revision, Value: r.Snapshot, Header: e.Header})
		case r.Deleted:
			f.apply(ctx, &bus.Entry{Bucket: e.Bucket, Key: r.Gateway, Revision: e.Revision, Op: bus.OpDelete, Header: e.Header})
		case r.Err != nil && errors.Is(r.Err, xdsbucket.ErrIncomplete):
			f.log.Debug("xds commit waits for its resources", "key", e.Key, "error", r.Err)
		case r.Err != nil:
			f.reject(ctx, e, "", r.Err)
		}
	}
}

// sweep empties the gateways that were served before a watch was reopened
// and were not in its initial sync: they were deleted meanwhile.
func (f *feed) sweep(ctx context.Context, seen map[string]bool) {
	for key, nodeCluster := range f.served {
		if !seen[key] {
			f.remove(ctx, key, nodeCluster)
		}
	}
}

// apply sets or empties the snapshot of one gateway. A value that does not
// decode, or decodes to a bad snapshot, is logged and counted; the
// gateway's previous snapshot stays in the cache.
func (f *feed) apply(ctx context.Context, e *bus.Entry) {
	nodeCluster, err := nodeClusterOf(e.Key)
	if err != nil {
		f.reject(ctx, e, "", err)
		return
	}
	if e.Op == bus.OpDelete {
		f.remove(e.Context(ctx), e.Key, nodeCluster)
		return
	}
	if e.Err != nil {
		f.reject(ctx, e, nodeCluster, e.Err)
		return
	}
	x, ok := e.Value.(*busv1.XdsSnapshot)
	if !ok {
		f.reject(ctx, e, nodeCluster, fmt.Errorf("value is a %T, want an XdsSnapshot", e.Value))
		return
	}
	if x.GetNodeCluster() != nodeCluster {
		f.reject(ctx, e, nodeCluster, fmt.Errorf("node_cluster %q does not match the key", x.GetNodeCluster()))
		return
	}
	prev, _ := f.cache.GetSnapshot(nodeCluster) // nil for a gateway not served yet
	snap, err := decodeSnapshot(x, prev)
	if err != nil {
		f.reject(ctx, e, nodeCluster, err)
		return
	}
	proxyless, err := decodeProxyless(x, snap)
	if err != nil {
		f.reject(ctx, e, nodeCluster, err)
		return
	}
	f.served[e.Key] = nodeCluster // held by the cache even when setting fails
	if !f.set(e.Context(ctx), nodeCluster, snap, proxyless) {
		return
	}
	f.log.Info("snapshot set", "gateway", nodeCluster, "version", x.GetVersion(),
		"source_revision", x.GetSourceRevision(), "revision", e.Revision,
		"proxyless_listeners", len(x.GetProxylessListeners()))
}

// set stores a gateway's snapshot for its Envoys and its proxyless
// snapshot, and reports whether both were delivered to every open watch.
// The cache stores a snapshot even when it cannot answer every watch: ctx
// ended (the service is stopping) or it could not hash the resources for
// delta clients.
func (f *feed) set(ctx context.Context, nodeCluster string, envoy, proxyless cache.ResourceSnapshot) bool {
	ok := true
	for _, s := range []struct {
		key  string
		snap cache.ResourceSnapshot
	}{{nodeCluster, envoy}, {proxylessKey(nodeCluster), proxyless}} {
		if err := f.cache.SetSnapshot(ctx, s.key, s.snap); err != nil {
			f.log.Warn("snapshot not delivered to all watches", "gateway", nodeCluster, "key", s.key, "error", err)
			ok = false
		}
	}
	return ok
}

// remove replaces a deleted gateway's snapshot with the empty snapshot, at
// a new version: its connected Envoys drop its listeners, and Envoys that
// connect later get nothing to serve. Clearing the snapshot from the cache
// instead would leave connected Envoys with their old configuration.
func (f *feed) remove(ctx context.Context, key, nodeCluster string) {
	delete(f.served, key)
	ok := f.set(ctx, nodeCluster, emptySnapshot(), emptySnapshot())
	// After the snapshot changed: a NACK of the old version seen before it
	// is forgotten, one seen after it is not recorded.
	f.dataPlane.removed(nodeCluster)
	if !ok {
		return
	}
	f.log.Info("snapshot emptied: gateway deleted", "gateway", nodeCluster, "key", key, "version", deletedVersion)
}

func (f *feed) reject(ctx context.Context, e *bus.Entry, nodeCluster string, err error) {
	f.rejected.Add(ctx, 1, metric.WithAttributes(attribute.String("gateway", nodeCluster)))
	f.log.Error("snapshot rejected; the previous one stays served", "key", e.Key,
		"gateway", nodeCluster, "revision", e.Revision, "error", err)
}

// nodeClusterOf is the node.cluster of the Envoys of the gateway whose
// snapshot is stored under key: <namespace>/<gateway>.
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
