package xds

import (
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
)

// holdingCache is the snapshot cache as the xDS server sees it: it holds
// two kinds of state-of-the-world requests that go-control-plane's cache
// would answer at once with the version the client already has or already
// rejected, until the gateway's snapshot changes.
//
// A NACK. A client that rejects a response asks again with the version it
// last applied, the nonce of the rejected response and an error detail.
// The cache answers every request whose version differs from the
// snapshot's, so it sends the rejected version again, which the client
// rejects again: a NACK storm (about 1,400 NACKs a second from gRPC-Go's
// xDS client on a loopback connection). A NACK of the version the cache
// still holds is therefore passed to the cache as a request for that
// version, which the cache holds until SetSnapshot brings another version.
// The rejected version is the one the stream last returned (the versions
// in the subscription's ReturnedResources); when that response held no
// resource it is taken to be the current version. A NACK of a version the
// cache no longer holds is answered at once with the current one.
//
// A reconnect. A client that reconnects, to this replica or another, sends
// in its first request of each type the version it last applied. On a new
// stream the cache has not returned anything yet, so it answers with the
// snapshot again even when the version is the same. When the version is
// the snapshot's, the request is passed to the cache with every resource of
// the snapshot's type marked as returned at that version, so it is held
// too. Replicas serve the same version for the same bucket value, so a
// client that moves between them gets no spurious update.
//
// Both rewrites are decided against the snapshot read just before the
// watch is created; if SetSnapshot changes it in between, the cache sees a
// request for an old version and answers it with the new one, so no change
// is ever held back.
//
// Delta streams need neither: the server records what it sent per resource
// (or what the client declares in initial_resource_versions) and the cache
// answers only resources whose versions differ, so a NACK or a reconnect to
// the same resources is not answered. CreateDeltaWatch is the cache's own.
type holdingCache struct {
	cache.SnapshotCache
	hash cache.NodeHash
}

// CreateWatch implements cache.ConfigWatcher.
func (c holdingCache) CreateWatch(req *cache.Request, sub cache.Subscription, out chan cache.Response) (func(), error) {
	snap, err := c.GetSnapshot(c.hash.ID(req.GetNode()))
	if err != nil {
		return c.SnapshotCache.CreateWatch(req, sub, out)
	}
	current := snap.GetVersion(req.GetTypeUrl())
	switch {
	case current == "":
		// A type the snapshot does not serve: nothing to hold.
	case req.GetErrorDetail() != nil && req.GetResponseNonce() != "":
		if rejectedVersion(sub, current) == current {
			req = withVersion(req, current)
		}
	case req.GetResponseNonce() == "" && req.GetVersionInfo() == current:
		sub = hasAll{Subscription: sub, returned: versions(snap, req.GetTypeUrl(), current)}
	}
	return c.SnapshotCache.CreateWatch(req, sub, out)
}

// rejectedVersion is the version of the response a NACK rejects: the
// version at which the stream's subscription last returned its resources,
// or fallback when it returned none.
func rejectedVersion(sub cache.Subscription, fallback string) string {
	for _, v := range sub.ReturnedResources() {
		return v // a state-of-the-world response returns all at one version
	}
	return fallback
}

// withVersion is a copy of req that reports version as the client's.
func withVersion(req *cache.Request, version string) *cache.Request {
	out := proto.Clone(req).(*cache.Request)
	out.VersionInfo = version
	return out
}

// versions maps every resource of typeURL in snap to version.
func versions(snap cache.ResourceSnapshot, typeURL, version string) map[string]string {
	rs := snap.GetResources(typeURL)
	out := make(map[string]string, len(rs))
	for name := range rs {
		out[name] = version
	}
	return out
}

// hasAll is a subscription whose client already has the resources in
// returned.
type hasAll struct {
	cache.Subscription
	returned map[string]string
}

// ReturnedResources implements cache.Subscription.
func (s hasAll) ReturnedResources() map[string]string { return s.returned }
