package xds

// The order of a push. What a resource needs must arrive before it
// (make-before-break): when types change together, a stream is sent
// secrets, clusters, endpoints, listeners and then routes. Removals go
// the other way: a cluster must not go while a listener or route the
// client holds still sends to it, or the client fails the requests in
// between (gRPC-Go fails the RPCs of a removed cluster at once; Envoy
// answers 503). So when the clusters due would remove a cluster the
// client was sent, the stream of an ADS client is sent listeners and
// routes first, and clusters and endpoints after them, as the xDS
// protocol asks ("stale CDS clusters ... can then be removed"); and if a
// new version of listeners or routes is due but waits for the client to
// answer the last one, the clusters and endpoints wait too, for the push
// that follows that answer. A routes response that waits for an Envoy to
// name its route configurations does not hold the clusters back: it may
// never come. A change that both adds a cluster and removes another is
// sent in the removal order too: a route that names a cluster not there
// yet makes gRPC-Go wait for it (its dependency manager applies no
// configuration before all its clusters are there) and Envoy answer 503
// until it arrives, in the same push; a removed cluster that a route
// still names would fail requests either way. Per-type streams (CDS, LDS,
// ... services) are not ordered against each other.

var (
	sendOrder   = []int{typeSecret, typeCluster, typeEndpoint, typeListener, typeRoute}
	removeOrder = []int{typeSecret, typeListener, typeRoute, typeCluster, typeEndpoint}
)

// pushOrder is the order in which the stream is sent the types of snap
// that are due, and whether its clusters and endpoints must wait for a
// later push.
func pushOrder(st *stream, snap *snapshot) (order []int, holdClusters bool) {
	if st.only >= 0 {
		return sendOrder, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !removes(&st.types[typeCluster], snap.types[typeCluster]) {
		return sendOrder, false
	}
	for _, i := range []int{typeListener, typeRoute} {
		if awaiting(&st.types[i], snap.types[i]) {
			return removeOrder, true
		}
	}
	return removeOrder, false
}

// removes reports whether t lacks a resource the client may hold and
// still subscribes to.
func removes(ts *typeState, t *typeSnap) bool {
	sent := ts.sentNames
	if !ts.subscribed || sent == nil || t == nil || sent == t.names {
		return false
	}
	for _, name := range sent.names {
		if !t.names.has(name) && ts.sub.contains(name) {
			return true
		}
	}
	return false
}

// awaiting reports whether a version of the type other than the one last
// sent is due, and waits for the client to answer the last response.
func awaiting(ts *typeState, t *typeSnap) bool {
	return ts.subscribed && t != nil && ts.pending != "" && ts.sentVersion != t.version && ts.held != t.version
}

// held reports whether type i waits in a push of the given order.
func held(i int, holdClusters bool) bool {
	return holdClusters && (i == typeCluster || i == typeEndpoint)
}
