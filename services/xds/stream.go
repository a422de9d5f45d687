package xds

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"
)

// stream is one xDS stream, state-of-the-world or delta, ADS or of one
// type. One goroutine runs it (see [Service.serve]); the store wakes it,
// the watchdog reads when its send started, and [Service.Streams] reads
// its state under mu.
type stream struct {
	id    uint64
	delta bool
	// only is the type of a per-type service (LDS, CDS, ...); -1 for ADS.
	only  int
	since time.Time
	grpc  grpc.ServerStream

	wake chan struct{} // capacity 1: a snapshot changed
	// sending is the time (unix nanoseconds) the send in progress started;
	// 0 when none is.
	sending atomic.Int64
	stuck   chan struct{} // closed by the watchdog
	stuckAt sync.Once

	entry atomic.Pointer[gatewayEntry] // set by the first request

	mu    sync.Mutex
	node  nodeInfo
	types [numTypes]typeState
	nonce uint64
}

// nodeInfo is what a stream keeps of its node: Envoy's node holds much
// more (its extensions, build, locality), which is dropped.
type nodeInfo struct {
	id, cluster, userAgent string
	// agentVersion is the node's user agent version, or its build
	// version.
	agentVersion string
	proxyless    bool
}

// maxAgent bounds what a stream keeps of its node's user agent.
const maxAgent = 200

func newNodeInfo(n *core.Node) nodeInfo {
	version := n.GetUserAgentVersion()
	if version == "" {
		if b := n.GetUserAgentBuildVersion().GetVersion(); b != nil {
			version = fmt.Sprintf("%d.%d.%d", b.GetMajorNumber(), b.GetMinorNumber(), b.GetPatch())
		}
	}
	return nodeInfo{id: n.GetId(), cluster: n.GetCluster(), userAgent: truncate(n.GetUserAgentName(), maxAgent),
		agentVersion: truncate(version, maxAgent), proxyless: isProxyless(n)}
}

// agent is the user agent and its version: "envoy 1.36.2".
func (n nodeInfo) agent() string {
	return strings.TrimSpace(n.userAgent + " " + n.agentVersion)
}

// typeState is what a stream keeps of one type: what the client asked
// for, what it was sent and what it answered. It holds no resource.
type typeState struct {
	subscribed bool
	sub        subscription
	// sentVersion is the version the client was last sent (or, on a new
	// state-of-the-world stream, the version it says it has).
	sentVersion string
	// pending is the nonce of the last response while it is unanswered;
	// a stream sends a type again only once the client answered.
	pending string
	// last is the nonce of the last response, answered or not.
	last   string
	sentAt time.Time
	// namesChanged is set when a subscription to part of a type changed
	// since the last response.
	namesChanged bool
	// sentPartial is set when the client may lack resources of
	// sentVersion: its last response held only the names it subscribed
	// to then, or it said it had the version for a subscription to part
	// of the type. A subscription that grows to cover the type is then
	// sent the whole type again, at the same version.
	sentPartial bool
	// sentNames are the names of the version last sent (or, on delta
	// streams, held): what the client may hold, to see whether the next
	// response removes any.
	sentNames *nameSet
	// held is the version a NACK rejected: it is not sent again.
	held    string
	acked   string
	ackedAt time.Time // when acked was acknowledged; zero for a version the client said it had
	nacked  *nackRecord

	// Delta: the client holds the resources of has (those it subscribes
	// to), except for those in diff, which it holds at the version there
	// ("" for none). initial is set until the first response.
	has     *typeSnap
	diff    map[string]string
	initial bool
}

// nackRecord is the last rejection of a type by a stream's client.
type nackRecord struct {
	version, detail string
	at              time.Time
}

// maxStreamDetail caps the error detail a stream keeps of a NACK.
const maxStreamDetail = 1024

// poke wakes the stream without blocking.
func (s *stream) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *stream) gatewayEntry() *gatewayEntry { return s.entry.Load() }

// view is the snapshot the stream is served now; nil before its first
// request names a gateway, or while the gateway has none.
func (s *stream) view() *snapshot {
	e := s.entry.Load()
	if e == nil {
		return nil
	}
	if s.node.proxyless {
		return e.proxyless.Load()
	}
	return e.envoy.Load()
}

// nextNonce returns the stream's next nonce.
func (s *stream) nextNonce() string {
	s.nonce++
	return nonceString(s.nonce)
}

// markStuck closes stuck once.
func (s *stream) markStuck() { s.stuckAt.Do(func() { close(s.stuck) }) }

// subscription is the names a stream's client subscribes to, of one
// type. A subscription to every resource of a version of the type
// shares that version's nameSet instead of holding a map of its own.
type subscription struct {
	wildcard bool
	// The names are those of base, without those in without, and those
	// in plus.
	base    *nameSet
	plus    map[string]struct{}
	without map[string]struct{}
}

func (s *subscription) contains(name string) bool {
	if s.wildcard {
		return true
	}
	if _, ok := s.plus[name]; ok {
		return true
	}
	if s.base == nil || !s.base.has(name) {
		return false
	}
	_, gone := s.without[name]
	return !gone
}

// size is the number of names, wildcard aside.
func (s *subscription) size() int {
	n := len(s.plus)
	if s.base != nil {
		n += len(s.base.names) - len(s.without)
	}
	return n
}

// covers reports whether the subscription holds every resource of t.
func (s *subscription) covers(t *typeSnap) bool {
	if s.wildcard || (s.base == t.names && len(s.without) == 0) {
		return true
	}
	if s.size() < len(t.names.names) {
		return false
	}
	for _, name := range t.names.names {
		if !s.contains(name) {
			return false
		}
	}
	return true
}

// set replaces the names with names (a state-of-the-world request's),
// sharing t's nameSet when they cover it; it reports whether they changed.
func (s *subscription) set(names []string, t *typeSnap) bool {
	wildcard := len(names) == 0
	for _, n := range names {
		wildcard = wildcard || n == "*"
	}
	if wildcard {
		changed := !s.wildcard
		*s = subscription{wildcard: true}
		return changed
	}
	if !s.wildcard && s.size() == len(names) && allContained(s, names) {
		return false
	}
	next := subscription{}
	if t != nil && len(names) >= len(t.names.names) && coversAll(names, t.names) {
		next.base = t.names
		for _, n := range names {
			if !t.names.has(n) {
				next.addPlus(n)
			}
		}
	} else {
		for _, n := range names {
			next.addPlus(n)
		}
	}
	*s = next
	return true
}

func allContained(s *subscription, names []string) bool {
	for _, n := range names {
		if !s.contains(n) {
			return false
		}
	}
	return true
}

// coversAll reports whether names hold every name of set.
func coversAll(names []string, set *nameSet) bool {
	seen := make([]bool, len(set.names))
	count := 0
	for _, n := range names {
		if i, ok := set.index[n]; ok && !seen[i] {
			seen[i] = true
			count++
		}
	}
	return count == len(set.names)
}

func (s *subscription) addPlus(name string) {
	if s.plus == nil {
		s.plus = map[string]struct{}{}
	}
	s.plus[name] = struct{}{}
}

// add subscribes to name (a delta request's); it reports whether the
// subscription changed.
func (s *subscription) add(name string) bool {
	if name == "*" {
		changed := !s.wildcard
		s.wildcard = true
		return changed
	}
	if s.contains(name) && !s.wildcard {
		return false
	}
	if s.base != nil && s.base.has(name) {
		delete(s.without, name)
		return true
	}
	s.addPlus(name)
	return true
}

// drop unsubscribes from name; it reports whether the subscription
// changed.
func (s *subscription) drop(name string) bool {
	if name == "*" {
		changed := s.wildcard
		s.wildcard = false
		return changed
	}
	if _, ok := s.plus[name]; ok {
		delete(s.plus, name)
		return true
	}
	if s.base != nil && s.base.has(name) {
		if s.without == nil {
			s.without = map[string]struct{}{}
		}
		if _, gone := s.without[name]; !gone {
			s.without[name] = struct{}{}
			return true
		}
	}
	return false
}

// compact shares t's nameSet when the names are exactly t's, so that a
// client that subscribed to every resource one by one holds no map.
func (s *subscription) compact(t *typeSnap) {
	if s.wildcard || t == nil || s.base == t.names && len(s.plus) == 0 && len(s.without) == 0 {
		return
	}
	if s.size() != len(t.names.names) {
		return
	}
	for _, name := range t.names.names {
		if !s.contains(name) {
			return
		}
	}
	*s = subscription{base: t.names}
}
