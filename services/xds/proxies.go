package xds

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"google.golang.org/protobuf/proto"
)

// proxiesMinInterval is the shortest time between two writes of the
// proxies bucket: the changes of a burst (a push to every stream of a
// gateway, and their ACKs) are written together.
const proxiesMinInterval = time.Second

// proxies mirrors this replica's streams to the proxies bucket
// ([bus.Proxies]), one busv1.ProxyStatus per stream under
// <ns>.<gateway>.<replica>.<stream>, for `gatewire proxy-status`. A stream
// is written once it is attached to its gateway (its first request was
// authorized: a refused client is never written), again after each
// response sent and each ACK or NACK that changed it (at most every
// proxiesMinInterval),
// and every [bus.ProxiesRefresh] so that its entry outlives the bucket's
// TTL; its entry is deleted when it ends, and the entries of every open
// stream when the replica stops. A replica that dies leaves entries that
// the TTL removes. A stream token is a random prefix of this run and the
// stream's number, so a restarted replica never writes over the entries
// of its previous run.
//
// Streams report to it from their goroutines without blocking; one
// goroutine ([proxies.run]) writes, reading each stream's state under the
// stream's lock (never holding its own lock then).
type proxies struct {
	bus     *bus.Bus
	log     *slog.Logger
	replica string
	token   string

	mu    sync.Mutex
	open  map[uint64]openStream // streams attached to a gateway with a valid key
	dirty map[uint64]bool
	gone  map[uint64]string // ended streams: their keys, to delete
	kick  chan struct{}     // capacity 1
	// refresh is set when every entry is due to be written, changed or
	// not.
	refresh bool
}

// openStream is a stream that is written, and its key.
type openStream struct {
	st  *stream
	key string
	// last is the entry last written, without its update time: a change
	// that leaves it the same is not written until the refresh.
	last []byte
}

func newProxies(b *bus.Bus, log *slog.Logger, replica string) *proxies {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return &proxies{bus: b, log: log, replica: replica, token: hex.EncodeToString(r[:]),
		open: map[uint64]openStream{}, dirty: map[uint64]bool{}, gone: map[uint64]string{}, kick: make(chan struct{}, 1)}
}

// key is the stream's key; "" when its node cluster is not
// <namespace>/<gateway> (only in the insecure mode, where clusters are not
// checked against a certificate).
func (p *proxies) key(st *stream, cluster string) string {
	ns, name, ok := strings.Cut(cluster, "/")
	if !ok || ns == "" || name == "" || strings.ContainsAny(name, "/*> ") || strings.ContainsAny(ns, "*> ") {
		return ""
	}
	return bus.ProxyKey(ns, name, p.replica, p.token+"-"+strconv.FormatUint(st.id, 10))
}

// opened starts writing the stream, attached to cluster.
func (p *proxies) opened(st *stream, cluster string) {
	key := p.key(st, cluster)
	if key == "" {
		p.log.Debug("xds stream not written to the proxies bucket: its node cluster is not <namespace>/<gateway>",
			"stream", st.id, "gateway", truncate(cluster, 200))
		return
	}
	p.mu.Lock()
	p.open[st.id] = openStream{st: st, key: key}
	p.markLocked(st.id)
	p.mu.Unlock()
}

// changed has the stream written again, if it is written at all.
func (p *proxies) changed(st *stream) {
	p.mu.Lock()
	if _, ok := p.open[st.id]; ok {
		p.markLocked(st.id)
	}
	p.mu.Unlock()
}

// closed has the stream's entry deleted.
func (p *proxies) closed(st *stream) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.open[st.id]
	if !ok {
		return
	}
	delete(p.open, st.id)
	delete(p.dirty, st.id)
	p.gone[st.id] = o.key
	p.kickLocked()
}

func (p *proxies) markLocked(id uint64) {
	p.dirty[id] = true
	p.kickLocked()
}

func (p *proxies) kickLocked() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// run writes until ctx is done, then deletes the entries of the open
// streams.
func (p *proxies) run(ctx context.Context) {
	refresh := time.NewTicker(bus.ProxiesRefresh)
	defer refresh.Stop()
	for {
		select {
		case <-ctx.Done():
			p.retire()
			return
		case <-p.kick:
		case <-refresh.C:
			p.mu.Lock()
			for id := range p.open {
				p.dirty[id] = true
			}
			p.refresh = true
			p.mu.Unlock()
		}
		p.flush(ctx)
		if !sleep(ctx, proxiesMinInterval) {
			p.retire()
			return
		}
	}
}

// flush deletes the entries of ended streams and writes the changed ones.
// A failed write is logged and left to the next refresh.
func (p *proxies) flush(ctx context.Context) {
	p.mu.Lock()
	gone := maps.Clone(p.gone)
	clear(p.gone)
	var write []openStream
	for _, id := range slices.Sorted(maps.Keys(p.dirty)) {
		write = append(write, p.open[id])
	}
	clear(p.dirty)
	refresh := p.refresh
	p.refresh = false
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	for _, key := range gone {
		if err := p.bus.Delete(ctx, bus.Proxies, key); err != nil {
			p.log.Warn("proxies entry not deleted", "key", key, "error", err)
		}
	}
	now := time.Now()
	for _, o := range write {
		value := o.st.proxyStatus(p.replica, time.Time{})
		value.Stream = o.key[strings.LastIndexByte(o.key, '.')+1:]
		same, _ := proto.MarshalOptions{Deterministic: true}.Marshal(value)
		if !refresh && bytes.Equal(same, o.last) {
			continue
		}
		value.UpdatedUnixNano = now.UnixNano()
		if _, err := p.bus.Put(ctx, bus.Proxies, o.key, value); err != nil {
			p.log.Warn("proxies entry not written", "key", o.key, "error", err, "retry", bus.ProxiesRefresh)
			continue
		}
		p.remember(o.st.id, same)
	}
}

// remember records what was written of a stream that is still open.
func (p *proxies) remember(id uint64, written []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o, ok := p.open[id]; ok {
		o.last = written
		p.open[id] = o
	}
}

// retire deletes the entries of the open streams: this replica no longer
// serves them.
func (p *proxies) retire() {
	p.mu.Lock()
	keys := slices.Collect(maps.Values(p.gone))
	for _, o := range p.open {
		keys = append(keys, o.key)
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), retireTimeout)
	defer cancel()
	for _, key := range keys {
		if err := p.bus.Delete(ctx, bus.Proxies, key); err != nil {
			p.log.Warn("proxies entry left behind until its TTL", "key", key, "error", err)
		}
	}
}

// proxyStatus is the stream's entry.
func (st *stream) proxyStatus(replica string, now time.Time) *busv1.ProxyStatus {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := &busv1.ProxyStatus{NodeId: st.node.id, NodeCluster: st.node.cluster, Replica: replica,
		ConnectedUnixNano: st.since.UnixNano(), UpdatedUnixNano: unixNano(now),
		Proxyless: st.node.proxyless, Delta: st.delta, UserAgent: st.node.agent()}
	for i := range numTypes {
		ts := &st.types[i]
		if !ts.subscribed {
			continue
		}
		t := &busv1.ProxyTypeStatus{TypeUrl: typeURLs[i], SentVersion: ts.sentVersion, AckedVersion: ts.acked,
			SentUnixNano: unixNano(ts.sentAt), AckedUnixNano: unixNano(ts.ackedAt)}
		if n := ts.nacked; n != nil && !ts.ackedAt.After(n.at) {
			t.NackedVersion, t.NackDetail, t.NackedUnixNano = n.version, n.detail, n.at.UnixNano()
		}
		out.Types = append(out.Types, t)
	}
	slices.SortFunc(out.Types, func(a, b *busv1.ProxyTypeStatus) int { return strings.Compare(a.TypeUrl, b.TypeUrl) })
	return out
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
