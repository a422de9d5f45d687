package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/provider/status"
)

// setStatus sets the status obj should have given its entries, and
// reports whether it differs from what obj had.
type setStatus func(obj client.Object, entries []status.Entry, controllerName string, now time.Time) bool

// statusKinds are the kinds whose status the provider writes.
var statusKinds = map[string]setStatus{
	"GatewayClass": func(obj client.Object, es []status.Entry, _ string, now time.Time) bool {
		o := obj.(*gatewayv1.GatewayClass)
		return assign(&o.Status, status.GatewayClass(o.Status, es, now))
	},
	"Gateway": func(obj client.Object, es []status.Entry, _ string, now time.Time) bool {
		o := obj.(*gatewayv1.Gateway)
		return assign(&o.Status, status.Gateway(o.Status, es, now))
	},
	"ListenerSet": func(obj client.Object, es []status.Entry, _ string, now time.Time) bool {
		o := obj.(*gatewayv1.ListenerSet)
		return assign(&o.Status, status.ListenerSet(o.Status, es, now))
	},
	"HTTPRoute": route(func(o client.Object) *gatewayv1.RouteStatus { return &o.(*gatewayv1.HTTPRoute).Status.RouteStatus }),
	"GRPCRoute": route(func(o client.Object) *gatewayv1.RouteStatus { return &o.(*gatewayv1.GRPCRoute).Status.RouteStatus }),
	"TLSRoute":  route(func(o client.Object) *gatewayv1.RouteStatus { return &o.(*gatewayv1.TLSRoute).Status.RouteStatus }),
	"TCPRoute":  route(func(o client.Object) *gatewayv1.RouteStatus { return &o.(*gatewayv1.TCPRoute).Status.RouteStatus }),
	"UDPRoute":  route(func(o client.Object) *gatewayv1.RouteStatus { return &o.(*gatewayv1.UDPRoute).Status.RouteStatus }),

	// One entry per Gateway in status.ancestors (policystatus.go).
	"BackendTLSPolicy": policyAncestors,
}

func route(statusOf func(client.Object) *gatewayv1.RouteStatus) setStatus {
	return func(obj client.Object, es []status.Entry, controllerName string, now time.Time) bool {
		st := statusOf(obj)
		return assign(&st.Parents, status.RouteParents(st.Parents, es, controllerName, now))
	}
}

// assign sets *dst to v and reports whether they differed.
func assign[T any](dst *T, v T) bool {
	changed := !equality.Semantic.DeepEqual(*dst, v)
	*dst = v
	return changed
}

// maxRequeue bounds the delay before a failed reconcile is retried (the
// default grows to 1000s): a bus or API server that was away for a while
// is caught up with within this much of its return. The rest is
// controller-runtime's default.
const maxRequeue = 30 * time.Second

func controllerOptions(needLeader bool) controller.Options {
	return controller.Options{
		NeedLeaderElection: &needLeader,
		RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, maxRequeue),
			&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
		),
	}
}

// statusControllers registers a status writer per served status kind. They
// run on the elected replica only.
func (p *Provider) statusControllers(mgr manager.Manager, s served) error {
	for name, set := range statusKinds {
		k, ok := s[name]
		if !ok {
			continue
		}
		w := &statusWriter{p: p, kind: k, set: set, cache: mgr.GetClient(), api: mgr.GetAPIReader(), writer: mgr.GetClient()}
		err := ctrl.NewControllerManagedBy(mgr).
			Named("status-" + strings.ToLower(name)).
			For(k.newObject()).
			WatchesRawSource(storeSource{store: p.store, kind: name}).
			WithOptions(controllerOptions(true)).
			Complete(w)
		if err != nil {
			return fmt.Errorf("kubernetes provider: %s status controller: %w", name, err)
		}
	}
	return nil
}

// storeSource enqueues the objects of one kind whose status entries
// change. It is synced once the status bucket has been read in full, so a
// writer never writes a status merged from part of an object's entries.
type storeSource struct {
	store *status.Store
	kind  string
}

func (s storeSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	cancel := s.store.Subscribe(func(c status.Change) {
		if c.Object.Kind == s.kind {
			q.Add(request(c.Object))
		}
	})
	context.AfterFunc(ctx, cancel)
	go func() {
		if s.store.WaitSynced(ctx) == nil {
			for _, o := range s.store.Objects(s.kind) {
				q.Add(request(o))
			}
		}
	}()
	return nil
}

func (s storeSource) WaitForSync(ctx context.Context) error { return s.store.WaitSynced(ctx) }

func request(o status.Object) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}}
}

// statusWriter writes the status of one kind.
type statusWriter struct {
	p      *Provider
	kind   kind
	set    setStatus
	cache  client.Reader
	api    client.Reader
	writer client.Client
}

// Reconcile writes the status of one object when it differs from what its
// entries say. The cached object decides whether a write may be needed;
// the write itself starts from the object read from the API server, and is
// retried when it conflicts.
func (w *statusWriter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	o := status.Object{Kind: w.kind.name, Namespace: req.Namespace, Name: req.Name}
	cached := w.kind.newObject()
	if err := w.cache.Get(ctx, req.NamespacedName, cached); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	entries := w.p.store.Entries(o)
	if !w.set(cached, entries, w.p.opts.ControllerName, time.Now()) {
		return reconcile.Result{}, nil
	}
	// One span per write, linked to the traces of the entries it merges.
	var links []trace.Link
	for _, e := range entries {
		if e.Trace.IsValid() {
			links = append(links, trace.Link{SpanContext: e.Trace})
		}
	}
	ctx, span := w.p.pub.tracer.Start(ctx, "provider.kubernetes.status", trace.WithLinks(links...),
		trace.WithAttributes(attribute.String("gatewire.object", o.String())))
	defer span.End()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return w.write(ctx, o, req.NamespacedName) })
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "status write failed")
		return reconcile.Result{}, fmt.Errorf("write status of %s: %w", o, err)
	}
	return reconcile.Result{}, nil
}

// write reads the object from the API server and writes its status if it
// differs from what its entries say.
func (w *statusWriter) write(ctx context.Context, o status.Object, nn types.NamespacedName) error {
	obj := w.kind.newObject()
	if err := w.api.Get(ctx, nn, obj); err != nil {
		return err
	}
	if !w.set(obj, w.p.store.Entries(o), w.p.opts.ControllerName, time.Now()) {
		return nil
	}
	if hook := w.p.beforeStatusUpdate; hook != nil {
		hook(ctx, obj)
	}
	kindAttr := metric.WithAttributes(attribute.String("kind", w.kind.name))
	err := w.writer.Status().Update(ctx, obj)
	if apierrors.IsConflict(err) {
		w.p.statusConflicts.Add(1)
		w.p.conflicts.Add(ctx, 1, kindAttr)
	}
	if err != nil {
		return err
	}
	w.p.statusWrites.Add(1)
	w.p.writes.Add(ctx, 1, kindAttr)
	w.p.log.Debug("status written", "object", o.String(), "resource_version", obj.GetResourceVersion())
	return nil
}
