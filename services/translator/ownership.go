package translator

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
)

// gatewayShardKey is what gateways are hashed by among replicas:
// "<namespace>/<name>".
func gatewayShardKey(gw types.NamespacedName) string { return gw.String() }

// classShardKey is what GatewayClasses are hashed by: their name, which
// has no '/' and so never equals a gateway's key.
func classShardKey(name string) string { return name }

// knownGateways are the gateways of the index, those that ListenerSets
// name without the index holding them (their ListenerSets get a status),
// and those the output buckets hold something for, each once.
func (s *Service) knownGateways(st *session) []types.NamespacedName {
	seen := map[types.NamespacedName]struct{}{}
	var out []types.NamespacedName
	for _, list := range [][]types.NamespacedName{st.idx.Gateways(), st.idx.MissingListenerSetParents(), st.ledger.gateways()} {
		for _, gw := range list {
			if _, ok := seen[gw]; !ok {
				seen[gw] = struct{}{}
				out = append(out, gw)
			}
		}
	}
	return out
}

// knownClasses are the classes of the index and those with a status.
func (s *Service) knownClasses(st *session) []string {
	seen := map[string]struct{}{}
	var out []string
	for _, list := range [][]string{st.idx.GatewayClasses(), st.ledger.classes()} {
		for _, c := range list {
			if _, ok := seen[c]; !ok {
				seen[c] = struct{}{}
				out = append(out, c)
			}
		}
	}
	return out
}

// reassign acts on a change of the membership: it marks the gateways and
// classes this replica now owns and did not before, for a whole
// translation, and forgets those it no longer owns. The others are left
// alone.
func (s *Service) reassign(ctx context.Context, st *session) {
	v, _ := s.members.View()
	old := st.view
	st.view = v
	if old.Equal(v) || !st.synced {
		return
	}
	gained, lost := 0, 0
	for _, gw := range s.knownGateways(st) {
		key := gatewayShardKey(gw)
		was, now := old.Owns(key), v.Owns(key)
		switch {
		case now && !was:
			st.mark(ctx, gw, workFull)
			gained++
		case was && !now:
			delete(st.last, gw)
			delete(st.gateways, gw)
			delete(st.built, gw)
			delete(st.statuses, gw)
			delete(st.statusJobs, gw)
			delete(st.irPending, gw)
			delete(st.irEncoders, gw)
			st.tr.forget(gw)
			lost++
		}
	}
	for _, c := range s.knownClasses(st) {
		if v.Owns(classShardKey(c)) && !old.Owns(classShardKey(c)) {
			st.classes[c] = ctx
		}
	}
	s.log.Info("gateways reassigned", "members", len(v.Members()), "gained", gained, "lost", lost, "revision", st.revision)
}

// observe records an entry of an output bucket. When another writer
// changed a key of a gateway or class this replica owns, from resources no
// newer than those this replica has read, the gateway's outputs are
// written again: the bus must hold this replica's translation. (An output
// from newer resources is left: reading on, this replica meets the change
// that explains it, and translates again then.)
func (s *Service) observe(ctx context.Context, st *session, e *bus.Entry) {
	if e == nil || !st.ledger.observe(e) || !st.synced {
		return
	}
	if e.Header.Get(headerWriter) == s.id {
		return
	}
	st.foreignWrite(e)
	if e.SourceRevision > st.revision {
		return
	}
	gw, ok := outputGateway(e.Bucket, e.Key)
	switch {
	case !ok:
		return
	case gw == classGatewayName:
		_, _, name, _, _, err := bus.ParseStatusKey(e.Key)
		if err == nil && st.view.Owns(classShardKey(name)) {
			st.classes[name] = ctx
		}
	case st.view.Owns(gatewayShardKey(gw)):
		st.mark(ctx, gw, workRewrite)
	}
}

// outputGateway is the gateway an output key belongs to; classGatewayName
// for the status of a class.
func outputGateway(b bus.Bucket, key string) (types.NamespacedName, bool) {
	if b == bus.Status {
		return statusGateway(key)
	}
	if gw, ok := xdsResourceGateway(key); b == bus.XDS && ok {
		return gw, true
	}
	ns, name, err := bus.ParseGatewayKey(key)
	return types.NamespacedName{Namespace: ns, Name: name}, err == nil
}
