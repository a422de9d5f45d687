package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/provider/syncmark"
)

// setup registers the indexes, controllers and runnables of one manager.
func (p *Provider) setup(ctx context.Context, mgr manager.Manager, s served) error {
	for _, name := range referrers {
		if k, ok := s[name]; ok {
			if err := mgr.GetFieldIndexer().IndexField(ctx, k.newObject(), refIndex, indexRefs); err != nil {
				return fmt.Errorf("kubernetes provider: index %s: %w", name, err)
			}
		}
	}
	for _, k := range kinds {
		if !s.has(k.name) {
			continue
		}
		var err error
		if k.referenced {
			err = p.referencedController(mgr, s, k)
		} else {
			err = p.publishController(mgr, s, k)
		}
		if err != nil {
			return fmt.Errorf("kubernetes provider: %s controller: %w", k.name, err)
		}
	}
	if err := p.statusControllers(mgr, s); err != nil {
		return err
	}
	if err := mgr.Add(everyReplica(func(ctx context.Context) error { return p.resync(ctx, mgr, s) })); err != nil {
		return err
	}
	return mgr.Add(leading{p})
}

// everyReplica is a runnable that runs whether or not the replica leads.
type everyReplica func(ctx context.Context) error

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }

func (everyReplica) NeedLeaderElection() bool { return false }

// leading tracks whether this replica leads: a runnable that needs leader
// election starts only once elected.
type leading struct{ p *Provider }

func (l leading) Start(ctx context.Context) error {
	l.p.leading.Store(true)
	l.p.log.Info("elected to write status", "lease", l.p.opts.LeaseNamespace+"/"+l.p.opts.LeaseName)
	<-ctx.Done()
	l.p.leading.Store(false)
	return nil
}

func (leading) NeedLeaderElection() bool { return true }

// publishController publishes the objects of kind k from the cache. It runs
// on every replica: publishing is idempotent.
func (p *Provider) publishController(mgr manager.Manager, s served, k kind) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("publish-" + strings.ToLower(k.name)).
		For(k.newObject()).
		WithOptions(controllerOptions(false)).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, p.sync(ctx, mgr, s, k, req.NamespacedName)
		}))
}

// referencedController publishes the Secrets or ConfigMaps that Gateways
// and BackendTLSPolicies reference. It follows the metadata of the kind's
// objects (never their data) to learn of changes, and the referencing
// objects and ReferenceGrants to learn which objects are referenced; it
// reads a referenced object from the API server when it changes.
func (p *Provider) referencedController(mgr manager.Manager, s served, k kind) error {
	c := mgr.GetClient()
	onlyReferenced := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		r := ref{kind: k.name, NamespacedName: client.ObjectKeyFromObject(obj)}
		if ok, err := p.referenced(ctx, c, s, r); !ok && err == nil {
			return nil
		}
		return []reconcile.Request{{NamespacedName: r.NamespacedName}}
	})
	refsOfKind := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return requestsOf(k.name, obj)
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("publish-"+strings.ToLower(k.name)).
		WatchesMetadata(k.newObject(), onlyReferenced).
		WithOptions(controllerOptions(false))
	for _, name := range referrers {
		if r, ok := s[name]; ok {
			b = b.Watches(r.newObject(), refsOfKind, builder.WithPredicates(refsChanged))
		}
	}
	if s.has("ReferenceGrant") {
		b = b.Watches(&gatewayv1.ReferenceGrant{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, obj client.Object) []reconcile.Request {
				return grantRequests(ctx, c, k.name, obj.(*gatewayv1.ReferenceGrant))
			}))
	}
	return b.Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, p.sync(ctx, mgr, s, k, req.NamespacedName)
	}))
}

// sync publishes the current state of one object: it reads it (from the
// cache, or from the API server for referenced kinds) and puts or deletes
// its key. The read and the write happen under the key's lock.
func (p *Provider) sync(ctx context.Context, mgr manager.Manager, s served, k kind, nn types.NamespacedName) error {
	key := bus.ResourceKey(k.name, nn.Namespace, nn.Name)
	unlock := p.pub.lock(key)
	defer unlock()
	obj, err := p.read(ctx, mgr, s, k, nn)
	if err != nil {
		return err
	}
	return p.pub.apply(ctx, k, key, obj)
}

// read returns the object to publish under nn, or nil when there is none.
func (p *Provider) read(ctx context.Context, mgr manager.Manager, s served, k kind, nn types.NamespacedName) (client.Object, error) {
	switch {
	case !s.has(k.name):
		return nil, nil
	case k.name == "Namespace" && !p.watches(nn.Name), k.namespaced && !p.watches(nn.Namespace):
		return nil, nil
	}
	reader := client.Reader(mgr.GetClient())
	if k.referenced {
		ok, err := p.referenced(ctx, reader, s, ref{kind: k.name, NamespacedName: nn})
		if err != nil || !ok {
			return nil, err
		}
		reader = mgr.GetAPIReader()
	}
	obj := k.newObject()
	if err := reader.Get(ctx, nn, obj); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if gc, ok := obj.(*gatewayv1.GatewayClass); ok && string(gc.Spec.ControllerName) != p.opts.ControllerName {
		return nil, nil // not gatewire's
	}
	return obj, nil
}

// resyncWithin is the deadline of the SYNCING mark of a resync: how long
// the translator waits for its SYNCED mark before it translates anyway.
const resyncWithin = 2 * time.Minute

// resync publishes every object once the caches are synced, deletes the
// keys of origin "kubernetes" that no object has, and marks the provider
// ready; between SYNCING and SYNCED sync marks, so that nothing is
// translated from a partial list. Bus errors are retried.
func (p *Provider) resync(ctx context.Context, mgr manager.Manager, s served) error {
	retry := minRetry
	for {
		start := time.Now()
		marks := syncmark.New(p.bus, "kubernetes")
		err := marks.Syncing(ctx, resyncWithin)
		var n, deleted int
		if err == nil {
			n, deleted, err = p.resyncOnce(ctx, mgr, s)
		}
		if err == nil {
			err = marks.Synced(ctx, n)
		}
		if err == nil {
			p.log.Info("resources resynced", "objects", n, "deleted", deleted, "duration", time.Since(start).Round(time.Millisecond))
			p.ready.Store(true)
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		p.log.Error("resync resources", "error", err, "delay", retry)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry):
			retry = min(2*retry, maxRetry)
		}
	}
}

func (p *Provider) resyncOnce(ctx context.Context, mgr manager.Manager, s served) (objects, deleted int, err error) {
	want := map[string]bool{}
	for _, k := range kinds {
		if !s.has(k.name) || k.referenced {
			continue
		}
		list := k.newList()
		if err := mgr.GetClient().List(ctx, list); err != nil {
			return objects, deleted, fmt.Errorf("list %s: %w", k.name, err)
		}
		err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			nn := client.ObjectKeyFromObject(obj)
			want[bus.ResourceKey(k.name, nn.Namespace, nn.Name)] = true
			return p.sync(ctx, mgr, s, k, nn)
		})
		if err != nil {
			return objects, deleted, err
		}
		if slices.Contains(referrers, k.name) {
			if err := p.syncRefs(ctx, mgr, s, list, want); err != nil {
				return objects, deleted, err
			}
		}
	}
	for _, key := range p.pub.keys() {
		if want[key] {
			continue
		}
		if err := p.syncKey(ctx, mgr, s, key); err != nil {
			return objects, deleted, err
		}
		if !p.pub.has(key) {
			deleted++
		}
	}
	return len(want), deleted, nil
}

// syncRefs publishes the objects that the Gateways or BackendTLSPolicies of
// list reference, and adds their keys to want.
func (p *Provider) syncRefs(ctx context.Context, mgr manager.Manager, s served, list client.ObjectList, want map[string]bool) error {
	return meta.EachListItem(list, func(o runtime.Object) error {
		for _, r := range refsOf(o.(client.Object)) {
			k, ok := s[r.kind]
			key := bus.ResourceKey(r.kind, r.Namespace, r.Name)
			if !ok || want[key] {
				continue
			}
			if err := p.sync(ctx, mgr, s, k, r.NamespacedName); err != nil {
				return err
			}
			want[key] = p.pub.has(key)
		}
		return nil
	})
}

// syncKey syncs the object of a published key: it is deleted unless it
// exists after all.
func (p *Provider) syncKey(ctx context.Context, mgr manager.Manager, s served, key string) error {
	kindName, ns, name, err := bus.ParseResourceKey(key)
	k, known := kindNamed(kindName)
	if err != nil || !known {
		unlock := p.pub.lock(key)
		defer unlock()
		return p.pub.apply(ctx, kind{name: keyKind(key)}, key, nil)
	}
	return p.sync(ctx, mgr, s, k, types.NamespacedName{Namespace: ns, Name: name})
}
