package translator

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/shard"
)

// work is how much of a gateway's translation a change calls for; more
// work covers less.
type work int

const (
	// workRewrite: the translation is as before, but the bus may not hold
	// it (another replica wrote the keys).
	workRewrite work = iota
	// workFull: translate again (reusing what did not change, see
	// translator).
	workFull
)

// pending is a gateway waiting to be translated, with the context of the
// latest change that affected it (for tracing).
type pending struct {
	ctx  context.Context
	work work
}

// session is the state of one watch of the resources bucket. It lives in
// the goroutine of Run and is never shared.
type session struct {
	idx    *resources.Index
	ledger *ledger
	// revision is the newest revision of the resources bucket applied to idx.
	revision uint64
	synced   bool
	// view is the membership the session last acted on.
	view shard.View
	// gateways and classes waiting to be translated.
	gateways map[types.NamespacedName]*pending
	classes  map[string]context.Context
	// tr translates the gateways, reusing what did not change since their
	// last translation; last is the latest translation of each owned
	// gateway that has one, and built the gateways whose xDS has been
	// written in this session.
	tr    *translator
	last  map[types.NamespacedName]*Output
	built map[types.NamespacedName]bool
	// irPending are the IRs translated and not written yet (see writeIRs),
	// since irFirst; the last was translated at irLast. irsEncoded gives
	// those being encoded, when some are (see encodeIRs).
	irPending       map[types.NamespacedName]pendingIR
	irFirst, irLast time.Time
	irsEncoded      <-chan []encodedIR
	// irEncoders encode the IR of each gateway whose IR was written, from
	// the bytes of its last write.
	irEncoders map[types.NamespacedName]*irEncoder
	// foreign are the resource keys of the xds bucket and the status keys
	// another writer wrote since this session last wrote them: the next
	// write of their gateway looks at them whatever changed.
	foreign map[sentKey]bool
	// sent is what the session last wrote to each output key; statuses
	// are the statuses last written for each gateway, with their keys.
	sent     map[sentKey]sentValue
	statuses map[types.NamespacedName]map[*busv1.Status]string
	// statusJobs are the statuses translated and not all written yet
	// (see writeStatusChunk).
	statusJobs map[types.NamespacedName]*statusJob
	// outputs are the entries of the output buckets (see watchOutputs).
	outputs <-chan *bus.Entry
	// gate holds translation while a provider syncs.
	gate *syncGate
	// bad are the resource keys whose values do not decode (badvalues.go).
	bad badValues
	// waited is set while the debounce of the pending changes runs or has
	// run.
	waited bool
}

// mark makes gw wait for at least w.
func (st *session) mark(ctx context.Context, gw types.NamespacedName, w work) {
	if p := st.gateways[gw]; p != nil {
		p.ctx, p.work = ctx, max(p.work, w)
		return
	}
	st.gateways[gw] = &pending{ctx: ctx, work: w}
}

func (st *session) dirty() bool { return len(st.gateways) > 0 || len(st.classes) > 0 }

// session reads the output buckets and the membership, then follows the
// resources bucket until ctx is done or the bus fails. It reports whether
// it got through the initial sync.
func (s *Service) session(ctx context.Context) (synced bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	outputs, err := s.watchOutputs(ctx)
	if err != nil {
		return false, err
	}
	led, err := loadLedger(ctx, outputs)
	if err != nil {
		return false, err
	}
	view, err := s.awaitView(ctx)
	if err != nil {
		return false, err
	}
	w, err := s.bus.Watch(ctx, bus.Resources, ">")
	if err != nil {
		return false, err
	}
	defer w.Stop()
	idx := resources.NewIndex()
	st := &session{
		idx:        idx,
		tr:         newTranslator(idx, s.cfg.Controller()),
		built:      map[types.NamespacedName]bool{},
		irPending:  map[types.NamespacedName]pendingIR{},
		irEncoders: map[types.NamespacedName]*irEncoder{},
		sent:       map[sentKey]sentValue{},
		foreign:    map[sentKey]bool{},
		statuses:   map[types.NamespacedName]map[*busv1.Status]string{},
		statusJobs: map[types.NamespacedName]*statusJob{},
		ledger:     led,
		view:       view,
		gateways:   map[types.NamespacedName]*pending{},
		classes:    map[string]context.Context{},
		last:       map[types.NamespacedName]*Output{},
		outputs:    outputs,
		gate:       newSyncGate(s.undecodableWait),
		bad:        badValues{},
	}
	err = s.follow(ctx, st, w)
	return st.synced, err
}

// awaitView waits until the membership has read the members bucket once.
// A replica that finds itself alone waits up to one heartbeat more for
// others to show up: replicas that start together would otherwise each
// translate every gateway before they learn of each other.
func (s *Service) awaitView(ctx context.Context) (shard.View, error) {
	var settle <-chan time.Time
	for {
		v, ok := s.members.View()
		switch {
		case ok && len(v.Members()) > 1:
			return v, nil
		case ok && settle == nil:
			settle = time.After(s.cfg.Heartbeat)
		}
		select {
		case <-ctx.Done():
			return shard.View{}, ctx.Err()
		case <-s.members.Changed():
		case <-settle:
			v, _ := s.members.View()
			return v, nil
		}
	}
}

// follow applies changes of the resources, the outputs and the membership
// as they come, and translates what they affect: as soon as no change is
// waiting in the watch (with no debounce), or once they have settled for
// the debounce time; never while a provider syncs (see syncGate). It
// writes the statuses translated a chunk at a time while no change waits.
func (s *Service) follow(ctx context.Context, st *session, w *bus.Watcher) error {
	var debounce, reopen <-chan time.Time
	var reopenAt time.Time // when reopen fires
	irs := time.NewTimer(time.Hour)
	defer irs.Stop()
	for {
		if len(st.irPending) > 0 && st.irsEncoded == nil {
			irs.Reset(time.Until(irDue(st)))
		}
		var statuses <-chan struct{}
		if len(st.statusJobs) > 0 && len(w.Updates()) == 0 {
			statuses = ready
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errWatchClosed
			}
			if e != nil {
				s.apply(ctx, st, e)
				break
			}
			// Not continue: a gate that holds the initial translation
			// needs its reopen timer, set below.
			if err := s.initialSync(ctx, st, w.SyncedRevision()); err != nil {
				return err
			}
		case e := <-st.outputs:
			s.observe(ctx, st, e)
		case <-s.members.Changed():
			s.reassign(ctx, st)
		case <-debounce:
			debounce = nil
		case <-reopen:
			reopen = nil
		case <-irs.C:
			if len(st.irPending) > 0 && st.irsEncoded == nil {
				st.encodeIRs()
			}
		case batch := <-st.irsEncoded:
			if err := s.writeIRs(ctx, st, batch); err != nil {
				return err
			}
		case <-statuses:
			if err := s.writeStatusChunk(ctx, st); err != nil {
				return err
			}
		}
		s.metrics.observePending(st)
		if !st.synced || !st.dirty() || debounce != nil {
			continue
		}
		shut, until := st.gate.closed(time.Now())
		switch {
		case shut:
			if !until.IsZero() && !until.Equal(reopenAt) {
				reopen, reopenAt = time.After(time.Until(until)), until
			}
			continue
		case s.cfg.Debounce > 0 && !st.waited:
			st.waited = true
			debounce = time.After(s.cfg.Debounce)
			continue
		case s.cfg.Debounce == 0 && len(w.Updates()) > 0:
			continue // more changes are waiting: take them first
		}
		st.waited = false
		if err := s.flush(st); err != nil {
			return err
		}
	}
}

// ready is always ready to receive from.
var ready = func() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// apply updates the index with one entry of the resources bucket and, after
// the initial sync, marks what it affects as dirty.
func (s *Service) apply(ctx context.Context, st *session, e *bus.Entry) {
	st.revision = max(st.revision, e.Revision)
	kind, ns, name, err := bus.ParseResourceKey(e.Key)
	if err != nil {
		s.log.Warn("ignoring resource with a bad key", "key", e.Key, "error", err)
		return
	}
	if st.gate.apply(e, kind, name) {
		s.logMark(st, e)
		return
	}
	var change resources.Change
	switch {
	case e.Op == bus.OpDelete:
		change = st.idx.Remove(kind, ns, name)
		s.decodes(ctx, st, e.Key)
	case e.Err != nil:
		s.badValue(ctx, st, e, kind, ns, name, e.Err)
		return
	default:
		r, ok := e.Value.(*busv1.Resource)
		if !ok || r.GetKind() != kind || r.GetNamespace() != ns || r.GetName() != name {
			s.badValue(ctx, st, e, kind, ns, name, errors.New("the value does not match its key"))
			return
		}
		if change, err = st.idx.Apply(r); err != nil {
			s.badValue(ctx, st, e, kind, ns, name, err)
			return
		}
		s.decodes(ctx, st, e.Key)
	}
	if !st.synced {
		return
	}
	changeCtx := e.Context(ctx)
	for _, gw := range change.Gateways {
		st.mark(changeCtx, gw, workFull)
	}
	for _, c := range change.GatewayClasses {
		st.classes[c] = changeCtx
	}
}

// initialSync marks every gateway and class, those of the index and those
// the bus still has outputs for, and translates those this replica owns.
// The index now holds the bucket as of revision synced (deletions
// included, which the initial sync does not deliver).
func (s *Service) initialSync(ctx context.Context, st *session, synced uint64) error {
	st.revision = max(st.revision, synced)
	for _, gw := range s.knownGateways(st) {
		st.mark(ctx, gw, workFull)
	}
	for _, c := range s.knownClasses(st) {
		st.classes[c] = ctx
	}
	st.synced = true
	s.log.Info("resources synced", "revision", st.revision, "gateways", len(st.gateways),
		"members", len(st.view.Members()), "providers_syncing", st.gate.syncing(time.Now()))
	if shut, _ := st.gate.closed(time.Now()); shut {
		return nil // the follow loop translates once the providers are synced
	}
	return s.flush(st)
}

// drainOutputs records the entries of the output buckets that have come in,
// so that their watches keep flowing while a flush writes many outputs.
// What they mark waits for the next flush.
func (s *Service) drainOutputs(st *session) {
	for {
		select {
		case e := <-st.outputs:
			s.observe(context.Background(), st, e)
		default:
			return
		}
	}
}

// flush translates the dirty gateways and classes this replica owns, and
// writes their outputs.
func (s *Service) flush(st *session) error {
	gateways := make([]types.NamespacedName, 0, len(st.gateways))
	for gw := range st.gateways {
		gateways = append(gateways, gw)
	}
	slices.SortFunc(gateways, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, gw := range gateways {
		p := st.gateways[gw]
		delete(st.gateways, gw)
		if !st.view.Owns(gatewayShardKey(gw)) {
			delete(st.last, gw)
			continue
		}
		if err := s.translateGateway(p.ctx, st, gw, p.work); err != nil {
			return err
		}
		s.drainOutputs(st)
	}
	for c, ctx := range st.classes {
		delete(st.classes, c)
		if !st.view.Owns(classShardKey(c)) {
			continue
		}
		if err := s.translateClass(ctx, st, c); err != nil {
			return err
		}
	}
	st.gate.translated = true
	if !s.ready.Swap(true) {
		s.log.Info("every gateway translated", "revision", st.revision)
	}
	return nil
}

// foreignWrite records a write by another writer of an xds resource key or
// a status key: an incremental write of the gateway, which looks only at
// what changed since its last translation, must look at it too.
func (st *session) foreignWrite(e *bus.Entry) {
	switch e.Bucket {
	case bus.XDS:
		if _, ok := xdsResourceGateway(e.Key); ok {
			st.foreign[sentKey{e.Bucket, e.Key}] = true
		}
	case bus.Status:
		st.foreign[sentKey{e.Bucket, e.Key}] = true
	}
}
