package translator

import (
	"cmp"
	"context"
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
	// workEndpoints: only EndpointSlices changed; the endpoints of the last
	// translation are brought up to date (see updateEndpoints).
	workEndpoints
	// workFull: translate again.
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
	// last is the latest translation of each owned gateway that has one.
	last map[types.NamespacedName]*Output
	// outputs are the entries of the output buckets (see watchOutputs).
	outputs <-chan *bus.Entry
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
	st := &session{
		idx:      resources.NewIndex(),
		ledger:   led,
		view:     view,
		gateways: map[types.NamespacedName]*pending{},
		classes:  map[string]context.Context{},
		last:     map[types.NamespacedName]*Output{},
		outputs:  outputs,
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
// as they come, and translates what they affect once they have settled for
// the debounce time.
func (s *Service) follow(ctx context.Context, st *session, w *bus.Watcher) error {
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errWatchClosed
			}
			if e == nil {
				if err := s.initialSync(ctx, st, w.SyncedRevision()); err != nil {
					return err
				}
				continue
			}
			s.apply(ctx, st, e)
		case e := <-st.outputs:
			s.observe(ctx, st, e)
		case <-s.members.Changed():
			s.reassign(ctx, st)
		case <-debounce:
			debounce = nil
			if err := s.flush(st); err != nil {
				return err
			}
		}
		observePending(st)
		if st.synced && debounce == nil && st.dirty() {
			debounce = time.After(s.cfg.Debounce)
		}
	}
}

// apply updates the index with one entry of the resources bucket and, after
// the initial sync, marks what it affects as dirty.
func (s *Service) apply(ctx context.Context, st *session, e *bus.Entry) {
	st.revision = max(st.revision, e.Revision)
	kind, ns, name, err := bus.ParseResourceKey(e.Key)
	if err != nil {
		s.log.Warn("ignoring resource with a bad key", "key", e.Key, "err", err)
		return
	}
	var change resources.Change
	switch {
	case e.Op == bus.OpDelete:
		change = st.idx.Remove(kind, ns, name)
	case e.Err != nil:
		s.log.Warn("resource value does not decode, keeping its last value", "key", e.Key, "err", e.Err)
		return
	default:
		r, ok := e.Value.(*busv1.Resource)
		if !ok || r.GetKind() != kind || r.GetNamespace() != ns || r.GetName() != name {
			s.log.Warn("resource value does not match its key, ignoring it", "key", e.Key)
			return
		}
		if change, err = st.idx.Apply(r); err != nil {
			s.log.Warn("resource object does not decode, keeping its last value", "key", e.Key, "origin", r.GetOrigin(), "err", err)
			return
		}
	}
	if !st.synced {
		return
	}
	w := workFull
	if kind == resources.KindEndpointSlice {
		w = workEndpoints
	}
	changeCtx := e.Context(ctx)
	for _, gw := range change.Gateways {
		st.mark(changeCtx, gw, w)
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
	n := len(st.gateways)
	if err := s.flush(st); err != nil {
		return err
	}
	st.synced = true
	s.ready.Store(true)
	s.log.Info("resources synced", "revision", st.revision, "gateways", n, "members", len(st.view.Members()))
	return nil
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
	return nil
}
