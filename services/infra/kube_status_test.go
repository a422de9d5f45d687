package infra_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra"
	"github.com/gatewire/gatewire/services/infra/kube"
)

func TestKubernetesPrune(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	_, stop := k.startKubeAs(kubeConfig(), b, k.config)
	putProxy(t, b, kubeProxy(k.ns, "old"))
	putProxy(t, b, kubeProxy(k.ns, "kept"))
	k.waitObjects(k.ns, "gatewire-old", "objects of old", nil)
	k.waitObjects(k.ns, "gatewire-kept", "objects of kept", nil)
	stop()

	// While no replica runs: old goes from the bucket; a ConfigMap of the
	// kept gateway under another name (an earlier naming) and one of another
	// installation appear.
	deleteKey(t, b, k.ns, "old")
	stray := k.configMap("gatewire-kept-stray", b.System(), k.ns+"/kept")
	foreign := k.configMap("gatewire-old-foreign", "another-system", k.ns+"/old")

	k.startKube(kubeConfig(), b) // ready once it has pruned
	if _, n := k.get(k.ns, "gatewire-old"); n != 0 {
		t.Errorf("%d objects of the deleted gateway remain after a restart", n)
	}
	if _, n := k.get(k.ns, "gatewire-kept"); n != 4 {
		t.Errorf("%d objects of the kept gateway, want 4", n)
	}
	if err := k.c.Get(k.ctx, client.ObjectKeyFromObject(stray), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("misplaced ConfigMap of a kept gateway: get = %v, want NotFound", err)
	}
	if err := k.c.Get(k.ctx, client.ObjectKeyFromObject(foreign), &corev1.ConfigMap{}); err != nil {
		t.Errorf("ConfigMap of another installation: %v, want it left alone", err)
	}
}

// configMap creates a ConfigMap labelled as the infra service of system
// labels the objects of gateway ("<ns>/<name>").
func (k *kubeTest) configMap(name, system, gateway string) *corev1.ConfigMap {
	k.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace:   k.ns,
		Name:        name,
		Labels:      map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelSystem: system},
		Annotations: map[string]string{kube.AnnotationGateway: gateway},
	}}
	if err := k.c.Create(k.ctx, cm); err != nil {
		k.t.Fatal(err)
	}
	return cm
}

func TestKubernetesAddresses(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	// An entry left by an earlier leader for a gateway without a Service.
	ghost := &busv1.Status{Addresses: []string{"192.0.2.1"}}
	if _, err := b.Put(context.Background(), bus.Status, infra.StatusKey(k.ns, "ghost"), ghost); err != nil {
		t.Fatal(err)
	}
	k.startKube(kubeConfig(), b)
	putProxy(t, b, kubeProxy(k.ns, "edge"))
	o := k.waitObjects(k.ns, "gatewire-edge", "objects of the gateway", nil)
	if o.svc.Spec.ClusterIP == "" {
		t.Fatal("the Service has no cluster IP")
	}
	waitAddresses(t, b, k.ns, "edge", []string{o.svc.Spec.ClusterIP})
	waitAddresses(t, b, k.ns, "ghost", nil)

	// A load balancer comes up.
	o.svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}, {Hostname: "edge.example.com"}}
	if err := k.c.Status().Update(k.ctx, &o.svc); err != nil {
		t.Fatalf("update Service status: %v", err)
	}
	waitAddresses(t, b, k.ns, "edge", []string{"203.0.113.7", "edge.example.com"})
	e, err := b.Get(context.Background(), bus.Status, infra.StatusKey(k.ns, "edge"))
	if err != nil {
		t.Fatal(err)
	}
	st := e.Value.(*busv1.Status)
	if st.GetObject().GetKind() != "Gateway" || st.GetObject().GetNamespace() != k.ns || st.GetObject().GetName() != "edge" ||
		st.GetObject().GetGroup() != "gateway.networking.k8s.io" || len(st.GetConditions()) != 0 {
		t.Errorf("status entry = %v, want the Gateway's addresses only", st)
	}

	deleteKey(t, b, k.ns, "edge")
	waitAddresses(t, b, k.ns, "edge", nil)
}

func waitAddresses(t *testing.T, b *bus.Bus, ns, name string, want []string) {
	t.Helper()
	testkit.EventuallyValue(t, waitTimeout, fmt.Sprintf("status addresses of %s/%s to be %q", ns, name, want), func() ([]string, bool) {
		got := statusAddresses(t, b, ns, name)
		return got, slices.Equal(got, want)
	})
}

func TestKubernetesLeaderElection(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	cfg := func(image string) infra.Config {
		c := kubeConfig()
		c.EnvoyImage = image
		c.LeaderElection, c.LeaderElectionNamespace, c.LeaderElectionID = true, k.ns, "infra-lease"
		return c
	}
	a, stopA := k.startKubeAs(cfg("envoy:a"), b, k.config)
	testkit.Eventually(t, waitTimeout, "a leads", a.Leading)
	standby, _ := k.startKubeAs(cfg("envoy:b"), b, k.config) // ready once it has seen a's lease
	if standby.Leading() {
		t.Fatal("two replicas lead")
	}

	putProxy(t, b, kubeProxy(k.ns, "edge"))
	image := func(o *objects) string { return o.dep.Spec.Template.Spec.Containers[0].Image }
	k.waitObjects(k.ns, "gatewire-edge", "the leader's Deployment", func(o *objects) bool { return image(o) == "envoy:a" })
	time.Sleep(2 * time.Second) // what the standby would write, it would have written by now
	if o, _ := k.get(k.ns, "gatewire-edge"); image(o) != "envoy:a" || standby.Leading() {
		t.Errorf("image %q with the standby leading=%v: the standby wrote", image(o), standby.Leading())
	}

	stopA() // releases the lease
	testkit.Eventually(t, waitTimeout, "the standby leads", standby.Leading)
	k.waitObjects(k.ns, "gatewire-edge", "the new leader's Deployment", func(o *objects) bool { return image(o) == "envoy:b" })
}
