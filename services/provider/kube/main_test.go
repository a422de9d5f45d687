package kube_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/kubetest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/kube"
)

// cluster is the API server all the tests of the package share; each test
// works in namespaces of its own.
var cluster *kubetest.Env

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(kubetest.Wrap(m, &cluster),
		// klog starts its flush daemon when its package loads.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		// controller-runtime wraps the watch of a metadata informer in
		// watch.Filter, whose goroutine blocks for ever on a send when the
		// informer stops with an event in flight: one per stopped manager.
		goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"),
	)
}

const (
	controllerName = gatewayclass.DefaultControllerName
	// timeout bounds what the tests wait for.
	timeout = 30 * time.Second
)

// harness is one test's bus, admin client and namespace.
type harness struct {
	t   *testing.T
	ctx context.Context
	bus *bus.Bus
	c   client.Client
	ns  string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	c, err := cluster.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &harness{t: t, ctx: ctx, bus: bustest.New(t), c: c, ns: cluster.Namespace(t, "kube")}
}

// options returns provider options watching namespaces (h.ns when none),
// with a Lease of the test's own.
func (h *harness) options(namespaces ...string) kube.Options {
	if len(namespaces) == 0 {
		namespaces = []string{h.ns}
	}
	return kube.Options{
		Namespaces: namespaces, ControllerName: controllerName,
		LeaderElection: true, LeaseName: "provider", LeaseNamespace: h.ns,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
	}
}

// running is a Provider that runs.
type running struct {
	*kube.Provider
	logs *testkit.LogBuffer
	stop func()
}

// start runs a provider until stop or the end of the test, and waits until
// it is ready.
func (h *harness) start(opts kube.Options) *running {
	h.t.Helper()
	logs := &testkit.LogBuffer{}
	p, err := kube.New(cluster.Config, h.bus, logs.JSONLogger(slog.LevelDebug), opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.run(p, logs)
}

func (h *harness) run(p *kube.Provider, logs *testkit.LogBuffer) *running {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("Run: %v", err)
		}
	})
	h.t.Cleanup(stop)
	h.t.Cleanup(func() {
		if h.t.Failed() {
			h.t.Logf("provider log:\n%s", logs.String())
		}
	})
	h.eventually("the provider is ready", p.Ready)
	return &running{Provider: p, logs: logs, stop: stop}
}

// eventually waits until ok, or fails the test after timeout.
func (h *harness) eventually(what string, ok func() bool) {
	h.t.Helper()
	testkit.Eventually(h.t, timeout, what, ok)
}

// create creates objects, failing the test on error.
func (h *harness) create(objs ...client.Object) {
	h.t.Helper()
	for _, o := range objs {
		if err := h.c.Create(h.ctx, o); err != nil {
			h.t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// resource returns the Resource under key, or nil.
func (h *harness) resource(key string) *busv1.Resource {
	h.t.Helper()
	e, err := h.bus.Get(h.ctx, bus.Resources, key)
	if err != nil {
		return nil
	}
	res, _ := e.Value.(*busv1.Resource)
	return res
}

// published waits until key holds a Resource for which ok is true, and
// returns it.
func (h *harness) published(key string, ok func(*busv1.Resource) bool) *busv1.Resource {
	h.t.Helper()
	var res *busv1.Resource
	h.eventually(key+" is published as expected", func() bool {
		res = h.resource(key)
		return res != nil && (ok == nil || ok(res))
	})
	return res
}

// gone waits until key is deleted.
func (h *harness) gone(key string) {
	h.t.Helper()
	h.eventually(key+" is deleted", func() bool {
		_, err := h.bus.Get(h.ctx, bus.Resources, key)
		return err != nil
	})
}

// object decodes a Resource's object.
func object(t *testing.T, res *busv1.Resource) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.GetObject(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// class returns a GatewayClass of controller with a name unique to the test.
func (h *harness) class(controller string) *gatewayv1.GatewayClass {
	return &gatewayv1.GatewayClass{
		ObjectMeta: objectMeta("", h.ns+"-"+strings.ReplaceAll(controller, "/", "-")),
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: gatewayv1.GatewayController(controller)},
	}
}
