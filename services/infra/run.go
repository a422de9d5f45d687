package infra

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/kubemode"
)

const (
	// retryInterval is how often failed applies and removes are tried again.
	retryInterval = 5 * time.Second
	// Backoff of a new watch after the watch of the infra bucket ended.
	rewatchMin = 500 * time.Millisecond
	rewatchMax = 30 * time.Second
)

// Run follows the infra bucket until ctx is done, then stops what must not
// outlive the service (host mode: the Envoy processes) and returns nil. A
// watch that ends is started again, with a fresh initial sync. In kubernetes
// mode with leader election it follows the bucket only while it leads.
func (s *Service) Run(ctx context.Context) error {
	defer func() {
		if err := s.prov.Close(); err != nil {
			s.log.Error("infra close failed", "error", err)
		}
	}()
	if s.kube != nil {
		// client-go logs through klog, taken from the context: send it to
		// the service's log.
		ctx = klog.NewContext(ctx, logr.FromSlogHandler(s.log.Handler()))
	}
	if s.kube != nil && s.cfg.LeaderElection {
		return s.kube.Elect(ctx, s.election, s.log, s.lead, s.onLeader)
	}
	s.lead(ctx)
	return nil
}

// onLeader records the leader of the election.
func (s *Service) onLeader(identity string) {
	s.leader.Store(&identity)
	s.log.Info("infra leader elected", "leader", identity, "self", identity == s.election.Identity)
}

// lead does the work of the active replica until ctx is done: it follows the
// infra bucket and, in kubernetes mode, publishes the gateways' addresses.
func (s *Service) lead(ctx context.Context) {
	s.leading.Store(true)
	defer func() {
		s.leading.Store(false)
		s.ready.Store(false)
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	if s.kube != nil {
		wg.Go(func() { s.publishAddresses(ctx) })
	}
	if err := s.startTLS(ctx); err != nil {
		return
	}
	if s.issuer != nil {
		wg.Go(func() { s.issuer.Run(ctx, renewEvery) })
	}
	backoff := rewatchMin
	for {
		synced, err := s.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		if synced {
			backoff = rewatchMin
		}
		s.log.Error("infra watch ended", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, rewatchMax)
	}
}

// change is what to do for one gateway: apply proxy, or remove when proxy is
// nil.
type change struct {
	namespace, name string
	proxy           *busv1.Proxy
}

// follow watches the infra bucket once and applies every entry. It reports
// whether the initial sync completed.
func (s *Service) follow(ctx context.Context) (bool, error) {
	w, err := s.bus.Watch(ctx, bus.Infra, ">")
	if err != nil {
		return false, err
	}
	defer w.Stop()
	seen := map[string]bool{} // gateways of the initial sync, by key; nil after it
	failed := map[string]change{}
	pruned := true // false while a prune after the initial sync has failed
	retry := time.NewTicker(retryInterval)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return seen == nil, ctx.Err()
		case <-retry.C:
			s.retry(ctx, failed)
			if !pruned {
				pruned = s.prune(ctx, s.bucketKeys(ctx))
			}
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				return seen == nil, errors.New("infra watch closed")
			case e == nil:
				pruned = s.synced(ctx, seen)
				seen = nil
			default:
				if seen != nil {
					seen[e.Key] = true
				}
				s.handle(ctx, e, failed)
			}
		}
	}
}

// synced prunes the gateways that are not in the bucket and marks the service
// ready. It reports whether the prune succeeded.
func (s *Service) synced(ctx context.Context, seen map[string]bool) bool {
	ok := s.prune(ctx, seen)
	s.ready.Store(true)
	s.log.Info("infra synced", "gateways", len(seen))
	return ok
}

// prune removes what runs the gateways whose keys are not in keys. It
// reports success; a failure is logged (unless ctx is done).
func (s *Service) prune(ctx context.Context, keys map[string]bool) bool {
	if keys == nil {
		return false
	}
	keep := func(namespace, name string) bool { return keys[bus.GatewayKey(namespace, name)] }
	if err := s.prov.Prune(ctx, keep); err != nil {
		if ctx.Err() == nil {
			s.log.Error("infra prune failed", "error", err, "retry_in", retryInterval)
			s.metrics.observeError(ctx, s.cfg.Mode, "prune", "failed")
		}
		return false
	}
	return true
}

// bucketKeys returns the keys of the infra bucket; nil when they cannot be
// read.
func (s *Service) bucketKeys(ctx context.Context) map[string]bool {
	keys, err := s.bus.Keys(ctx, bus.Infra, ">")
	if err != nil {
		s.log.Warn("infra keys failed", "error", err)
		return nil
	}
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out
}

// handle applies one entry of the bucket; a failure of the provisioner is
// kept in failed to be retried.
func (s *Service) handle(ctx context.Context, e *bus.Entry, failed map[string]change) {
	c, err := changeOf(e)
	if err != nil {
		s.log.Error("infra entry skipped", "key", e.Key, "revision", e.Revision, "error", err)
		s.metrics.observeError(ctx, s.cfg.Mode, "apply", "invalid")
		return
	}
	delete(failed, e.Key)
	err = s.apply(e.Context(ctx), c)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// Stopping: the next start applies the bucket again.
	case errors.Is(err, kubemode.ErrInvalid):
		// Trying again gives the same answer; a new value of the key will
		// be tried.
		s.log.Error("infra apply refused", "gateway", c.namespace+"/"+c.name, "revision", e.Revision, "error", err)
	default:
		s.log.Error("infra apply failed", "gateway", c.namespace+"/"+c.name, "error", err, "retry_in", retryInterval)
		failed[e.Key] = c
	}
}

func (s *Service) retry(ctx context.Context, failed map[string]change) {
	for key, c := range failed {
		if err := s.apply(ctx, c); err != nil {
			s.log.Debug("infra retry failed", "gateway", c.namespace+"/"+c.name, "error", err)
			continue
		}
		s.log.Info("infra retry succeeded", "gateway", c.namespace+"/"+c.name)
		delete(failed, key)
	}
}

func (s *Service) apply(ctx context.Context, c change) (err error) {
	defer func() { s.metrics.observeApply(ctx, s.cfg.Mode, c, err) }()
	if c.proxy == nil {
		return s.prov.Remove(ctx, c.namespace, c.name)
	}
	return s.prov.Apply(ctx, c.proxy)
}

// changeOf checks an entry of the infra bucket: a key made by bus.GatewayKey
// and, for a put, a Proxy of that same gateway.
func changeOf(e *bus.Entry) (change, error) {
	ns, name, err := bus.ParseGatewayKey(e.Key)
	if err != nil {
		return change{}, err
	}
	if err := bootstrap.CheckGateway(ns, name); err != nil {
		return change{}, err
	}
	c := change{namespace: ns, name: name}
	if e.Op == bus.OpDelete {
		return c, nil
	}
	if e.Err != nil {
		return change{}, e.Err
	}
	proxy, ok := e.Value.(*busv1.Proxy)
	if !ok {
		return change{}, fmt.Errorf("value is a %T, want a gatewire.bus.v1.Proxy", e.Value)
	}
	if proxy.GetNamespace() != ns || proxy.GetName() != name {
		return change{}, fmt.Errorf("proxy of gateway %q/%q under the key of %s/%s",
			proxy.GetNamespace(), proxy.GetName(), ns, name)
	}
	if nc := proxy.GetNodeCluster(); nc != "" && nc != bootstrap.NodeCluster(ns, name) {
		return change{}, fmt.Errorf("node cluster %q: want %q", nc, bootstrap.NodeCluster(ns, name))
	}
	c.proxy = proxy
	return c, nil
}
