package xds

import (
	"context"
	"strings"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// ProxylessMetadataKey is the node metadata field that marks an xDS client
// as a proxyless gRPC client: true (a boolean, or the string "true"). Such
// a client of the gateway <namespace>/<gateway> (its node.cluster) is
// served the gateway's API listeners instead of its Envoy listeners. A
// gRPC-Go bootstrap sets it with
//
//	"node": {"id": "...", "cluster": "ns/gw", "metadata": {"gatewire.dev/proxyless": true}}
const ProxylessMetadataKey = "gatewire.dev/proxyless"

// proxylessSuffix turns a gateway's node cluster into the cache key of its
// proxyless snapshot. Gateway names cannot hold a "/", so the key is never
// a node cluster of Envoys.
const proxylessSuffix = "/proxyless"

// isProxyless reports whether node carries the proxyless marker.
func isProxyless(node *core.Node) bool {
	v := node.GetMetadata().GetFields()[ProxylessMetadataKey]
	switch k := v.GetKind().(type) {
	case *structpb.Value_BoolValue:
		return k.BoolValue
	case *structpb.Value_StringValue:
		return k.StringValue == "true"
	}
	return false
}

// proxylessKey is the cache key of the proxyless snapshot of the gateway
// whose Envoys' node cluster is nodeCluster.
func proxylessKey(nodeCluster string) string { return nodeCluster + proxylessSuffix }

// nodeHash keys the snapshot cache by node.cluster: all Envoys of a
// gateway share its snapshot, and all its proxyless gRPC clients share its
// proxyless snapshot, under [proxylessKey] of the cluster. A node without
// a cluster maps to "", which never has a snapshot (and the callbacks
// refuse it first).
type nodeHash struct{}

func (nodeHash) ID(node *core.Node) string {
	c := node.GetCluster()
	if c == "" || !isProxyless(node) {
		return c
	}
	return proxylessKey(c)
}

// splitCache holds the snapshots of Envoys and of proxyless gRPC clients
// in two go-control-plane caches, and sends each call to the one that
// holds its key. Both key nodes with [nodeHash].
//
// The Envoy cache is in ADS mode: it answers a request that names
// resources only when the request names every resource of the type in the
// snapshot, which an Envoy does (it asks for the routes of all its
// listeners and the endpoints of all its clusters), and it answers the
// open watches of a node in xDS type order. A gRPC client names only what
// its channels use, so its cache is not in ADS mode: it is answered with
// the resources it names that exist, and a listener or cluster it names
// that is not in the answer is gone to it. In ADS mode it would get no
// answer at all, and keep what it had.
type splitCache struct {
	envoy, proxyless cache.SnapshotCache
}

var _ cache.SnapshotCache = splitCache{}

func newSplitCache(log cacheLogger) splitCache {
	return splitCache{
		envoy:     cache.NewSnapshotCache(true, nodeHash{}, log),
		proxyless: cache.NewSnapshotCache(false, nodeHash{}, log),
	}
}

// of is the cache that holds key.
func (c splitCache) of(key string) cache.SnapshotCache {
	if strings.HasSuffix(key, proxylessSuffix) {
		return c.proxyless
	}
	return c.envoy
}

func (c splitCache) ofNode(node *core.Node) cache.SnapshotCache { return c.of(nodeHash{}.ID(node)) }

// CreateWatch implements cache.ConfigWatcher.
func (c splitCache) CreateWatch(req *cache.Request, sub cache.Subscription, out chan cache.Response) (func(), error) {
	return c.ofNode(req.GetNode()).CreateWatch(req, sub, out)
}

// CreateDeltaWatch implements cache.ConfigWatcher.
func (c splitCache) CreateDeltaWatch(req *cache.DeltaRequest, sub cache.Subscription, out chan cache.DeltaResponse) (func(), error) {
	return c.ofNode(req.GetNode()).CreateDeltaWatch(req, sub, out)
}

// Fetch implements cache.ConfigFetcher.
func (c splitCache) Fetch(ctx context.Context, req *cache.Request) (cache.Response, error) {
	return c.ofNode(req.GetNode()).Fetch(ctx, req)
}

// SetSnapshot implements cache.SnapshotCache.
func (c splitCache) SetSnapshot(ctx context.Context, key string, snap cache.ResourceSnapshot) error {
	return c.of(key).SetSnapshot(ctx, key, snap)
}

// GetSnapshot implements cache.SnapshotCache.
func (c splitCache) GetSnapshot(key string) (cache.ResourceSnapshot, error) {
	return c.of(key).GetSnapshot(key)
}

// ClearSnapshot implements cache.SnapshotCache.
func (c splitCache) ClearSnapshot(key string) { c.of(key).ClearSnapshot(key) }

// GetStatusInfo implements cache.SnapshotCache.
func (c splitCache) GetStatusInfo(key string) cache.StatusInfo { return c.of(key).GetStatusInfo(key) }

// GetStatusKeys implements cache.SnapshotCache.
func (c splitCache) GetStatusKeys() []string {
	return append(c.envoy.GetStatusKeys(), c.proxyless.GetStatusKeys()...)
}
