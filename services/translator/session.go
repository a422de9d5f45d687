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
)

// session is the state of one watch of the resources bucket. It lives in
// the goroutine of Run and is never shared.
type session struct {
	idx    *resources.Index
	ledger *ledger
	// revision is the newest revision of the resources bucket applied to idx.
	revision uint64
	synced   bool
	// dirty gateways and classes, each with the context of the latest change
	// that affected it (for tracing).
	gateways map[types.NamespacedName]context.Context
	classes  map[string]context.Context
}

// session reads the translator's outputs, then follows the resources bucket
// until ctx is done or the bus fails. It reports whether it got through the
// initial sync.
func (s *Service) session(ctx context.Context) (synced bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	led, err := s.loadLedger(ctx)
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
		gateways: map[types.NamespacedName]context.Context{},
		classes:  map[string]context.Context{},
	}
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return st.synced, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return st.synced, errWatchClosed
			}
			if e == nil {
				if err := s.initialSync(ctx, st); err != nil {
					return st.synced, err
				}
				continue
			}
			s.apply(ctx, st, e)
			if st.synced && debounce == nil && (len(st.gateways) > 0 || len(st.classes) > 0) {
				debounce = time.After(s.cfg.Debounce)
			}
		case <-debounce:
			debounce = nil
			if err := s.flush(st); err != nil {
				return st.synced, err
			}
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
	changeCtx := e.Context(ctx)
	for _, gw := range change.Gateways {
		st.gateways[gw] = changeCtx
	}
	for _, c := range change.GatewayClasses {
		st.classes[c] = changeCtx
	}
}

// initialSync marks every gateway and class, those of the index and those
// the bus still has outputs for, and translates them all.
//
// The index now holds the whole bucket, so it is at least as new as any
// output read at the start: if the newest entries were deletions (which
// the initial sync does not deliver), the revision of the outputs is the
// better lower bound of the revision applied.
func (s *Service) initialSync(ctx context.Context, st *session) error {
	st.revision = max(st.revision, st.ledger.maxSource)
	for _, gw := range st.idx.Gateways() {
		st.gateways[gw] = ctx
	}
	for _, gw := range st.ledger.gateways() {
		st.gateways[gw] = ctx
	}
	for _, c := range st.idx.GatewayClasses() {
		st.classes[c] = ctx
	}
	for _, c := range st.ledger.classes() {
		st.classes[c] = ctx
	}
	n := len(st.gateways)
	if err := s.flush(st); err != nil {
		return err
	}
	st.synced = true
	s.ready.Store(true)
	s.log.Info("resources synced", "revision", st.revision, "gateways", n)
	return nil
}

// flush translates the dirty gateways and classes and writes their outputs.
func (s *Service) flush(st *session) error {
	gateways := make([]types.NamespacedName, 0, len(st.gateways))
	for gw := range st.gateways {
		gateways = append(gateways, gw)
	}
	slices.SortFunc(gateways, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, gw := range gateways {
		ctx := st.gateways[gw]
		delete(st.gateways, gw)
		if !s.owns(gw) {
			continue
		}
		if err := s.translateGateway(ctx, st, gw); err != nil {
			return err
		}
	}
	for c, ctx := range st.classes {
		delete(st.classes, c)
		if err := s.translateClass(ctx, st, c); err != nil {
			return err
		}
	}
	return nil
}
