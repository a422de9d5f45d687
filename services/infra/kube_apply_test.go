package infra_test

import (
	"slices"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/kube"
)

func TestKubernetesApply(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	gw := k.gateway("edge")
	k.startKube(kubeConfig(), b)
	p := kubeProxy(k.ns, "edge")
	p.GatewayUid = string(gw.UID)
	putProxy(t, b, p)

	o := k.waitObjects(k.ns, "gatewire-edge", "objects of the gateway", nil)
	for _, m := range []metav1.ObjectMeta{o.sa.ObjectMeta, o.cm.ObjectMeta, o.dep.ObjectMeta, o.svc.ObjectMeta} {
		checkMeta(t, m, b.System(), k.ns, "edge", gw.UID)
	}
	checkConfigMap(t, &o.cm, k.ns+"/edge", infra.DefaultKubernetesXDSAddress)
	checkDeployment(t, &o.dep, k.ns+"/edge", "envoyproxy/envoy:distroless-v1.36.2", 1)
	if o.sa.AutomountServiceAccountToken == nil || *o.sa.AutomountServiceAccountToken {
		t.Errorf("ServiceAccount mounts an API token")
	}
	checkService(t, &o.svc, corev1.ServiceTypeLoadBalancer, []corev1.ServicePort{
		{Name: "tcp-80", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(10080)},
	})
	if !labels.SelectorFromSet(o.svc.Spec.Selector).Matches(labels.Set(o.dep.Spec.Template.Labels)) {
		t.Errorf("Service selector %v does not select the pods %v", o.svc.Spec.Selector, o.dep.Spec.Template.Labels)
	}
	for _, f := range o.dep.ManagedFields {
		if f.Operation == metav1.ManagedFieldsOperationApply && f.Manager != kube.FieldManager {
			t.Errorf("Deployment applied by %q, want %q", f.Manager, kube.FieldManager)
		}
	}
}

// checkMeta checks what makes an object findable from its Gateway.
func checkMeta(t *testing.T, m metav1.ObjectMeta, system, ns, name string, uid types.UID) {
	t.Helper()
	want := map[string]string{
		"app.kubernetes.io/managed-by":   "gatewire",
		"gateway.gatewire.dev/namespace": ns,
		"gateway.gatewire.dev/name":      name,
		"gateway.gatewire.dev/system":    system,
	}
	for key, v := range want {
		if m.Labels[key] != v {
			t.Errorf("%s: label %s = %q, want %q", m.Name, key, m.Labels[key], v)
		}
	}
	if got := m.Annotations[kube.AnnotationGateway]; got != ns+"/"+name {
		t.Errorf("%s: annotation %s = %q", m.Name, kube.AnnotationGateway, got)
	}
	if uid == "" {
		if len(m.OwnerReferences) != 0 {
			t.Errorf("%s: owner references %v, want none", m.Name, m.OwnerReferences)
		}
		return
	}
	refs := m.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Gateway" || refs[0].APIVersion != "gateway.networking.k8s.io/v1" ||
		refs[0].Name != name || refs[0].UID != uid || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("%s: owner references %+v, want the Gateway %s as controller", m.Name, refs, uid)
	}
}

func checkConfigMap(t *testing.T, cm *corev1.ConfigMap, cluster, xds string) {
	t.Helper()
	bs, err := bootstrap.Unmarshal([]byte(cm.Data[kube.BootstrapKey]))
	if err != nil {
		t.Fatalf("ConfigMap %s: %v", kube.BootstrapKey, err)
	}
	if got := bs.GetNode().GetCluster(); got != cluster {
		t.Errorf("node.cluster = %q, want %q", got, cluster)
	}
	for _, c := range bs.GetStaticResources().GetClusters() {
		if c.GetName() != bootstrap.XDSClusterName {
			continue
		}
		sa := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
		if got := sa.GetAddress() + ":" + itoa(sa.GetPortValue()); got != xds {
			t.Errorf("xds cluster at %s, want %s", got, xds)
		}
	}
	ls := bs.GetStaticResources().GetListeners()
	if len(ls) != 1 || ls[0].GetAddress().GetSocketAddress().GetPortValue() != 19001 {
		t.Errorf("static listeners %v, want the readiness listener on 19001", ls)
	}
}

func checkDeployment(t *testing.T, dep *appsv1.Deployment, cluster, image string, replicas int32) {
	t.Helper()
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != replicas {
		t.Errorf("replicas = %v, want %d", dep.Spec.Replicas, replicas)
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("containers = %d, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != image {
		t.Errorf("image = %q, want %q", c.Image, image)
	}
	wantArgs := []string{"--config-path", "/etc/envoy/bootstrap.yaml", "--service-cluster", cluster,
		"--service-node", cluster + "/$(POD_NAME)"}
	if len(c.Args) < len(wantArgs) || !slices.Equal(c.Args[:len(wantArgs)], wantArgs) {
		t.Errorf("args = %q, want them to start with %q", c.Args, wantArgs)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "POD_NAME" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("env = %+v, want POD_NAME from metadata.name", c.Env)
	}
	probe := c.ReadinessProbe
	if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != "/ready" || probe.HTTPGet.Port != intstr.FromString("readiness") {
		t.Errorf("readiness probe = %+v, want GET /ready on the readiness port", probe)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "readiness" && p.ContainerPort == 19001 }) {
		t.Errorf("container ports %+v lack readiness 19001", c.Ports)
	}
	checkHardening(t, pod, c)
	if c.Resources.Requests.Cpu().String() != "100m" || c.Resources.Requests.Memory().String() != "128Mi" {
		t.Errorf("requests = %v, want cpu 100m and memory 128Mi", c.Resources.Requests)
	}
	if pod.ServiceAccountName != dep.Name {
		t.Errorf("service account = %q, want %q", pod.ServiceAccountName, dep.Name)
	}
	if pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != dep.Name {
		t.Errorf("volumes = %+v, want the ConfigMap %s first", pod.Volumes, dep.Name)
	}
}

func checkHardening(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod security context = %+v, want non-root with a numeric uid", psc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context = %+v, want a read-only root, no escalation, no capabilities", sc)
	}
}

func checkService(t *testing.T, svc *corev1.Service, typ corev1.ServiceType, ports []corev1.ServicePort) {
	t.Helper()
	if svc.Spec.Type != typ {
		t.Errorf("Service type = %s, want %s", svc.Spec.Type, typ)
	}
	if !slices.EqualFunc(svc.Spec.Ports, ports, samePort) {
		t.Errorf("Service ports = %+v, want %+v", svc.Spec.Ports, ports)
	}
}

// samePort compares what the Service port says, not what the server
// allocates (node ports).
func samePort(a, b corev1.ServicePort) bool {
	return a.Name == b.Name && a.Protocol == b.Protocol && a.Port == b.Port && a.TargetPort == b.TargetPort
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func TestKubernetesUpdate(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	k.startKube(kubeConfig(), b)
	p := kubeProxy(k.ns, "edge")
	putProxy(t, b, p)
	before := k.waitObjects(k.ns, "gatewire-edge", "objects of the gateway", nil)

	// The same proxy again, then another gateway: once the other gateway's
	// objects exist, the first one has been applied again.
	putProxy(t, b, p)
	putProxy(t, b, kubeProxy(k.ns, "barrier"))
	k.waitObjects(k.ns, "gatewire-barrier", "objects of the barrier gateway", nil)
	after, _ := k.get(k.ns, "gatewire-edge")
	for i, pair := range [][2]metav1.ObjectMeta{
		{before.sa.ObjectMeta, after.sa.ObjectMeta}, {before.cm.ObjectMeta, after.cm.ObjectMeta},
		{before.dep.ObjectMeta, after.dep.ObjectMeta}, {before.svc.ObjectMeta, after.svc.ObjectMeta},
	} {
		if pair[0].ResourceVersion != pair[1].ResourceVersion {
			t.Errorf("object %d (%s) changed by an unchanged proxy: resourceVersion %s → %s",
				i, pair[0].Name, pair[0].ResourceVersion, pair[1].ResourceVersion)
		}
	}

	p.Ports = append(p.Ports, &busv1.ProxyPort{Name: "https", Protocol: "TCP", Port: 443, ContainerPort: 10443})
	p.Replicas, p.ServiceType, p.Image = 3, "ClusterIP", "registry.example/envoy:custom"
	putProxy(t, b, p)
	o := k.waitObjects(k.ns, "gatewire-edge", "port 443 in the Service", func(o *objects) bool {
		return len(o.svc.Spec.Ports) == 2 && o.svc.Spec.Type == corev1.ServiceTypeClusterIP
	})
	checkService(t, &o.svc, corev1.ServiceTypeClusterIP, []corev1.ServicePort{
		{Name: "tcp-80", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(10080)},
		{Name: "tcp-443", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(10443)},
	})
	for _, sp := range o.svc.Spec.Ports {
		if sp.NodePort != 0 {
			t.Errorf("ClusterIP Service keeps node port %d", sp.NodePort)
		}
	}
	checkDeployment(t, &o.dep, k.ns+"/edge", "registry.example/envoy:custom", 3)
	ports := o.dep.Spec.Template.Spec.Containers[0].Ports
	if !slices.ContainsFunc(ports, func(p corev1.ContainerPort) bool { return p.ContainerPort == 10443 }) {
		t.Errorf("container ports %+v lack 10443", ports)
	}
}

func TestKubernetesDelete(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	k.startKube(kubeConfig(), b)
	putProxy(t, b, kubeProxy(k.ns, "edge"))
	k.waitObjects(k.ns, "gatewire-edge", "objects of the gateway", nil)
	deleteKey(t, b, k.ns, "edge")
	k.waitGone(k.ns, "gatewire-edge")
}

func TestKubernetesSharedNamespace(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	cfg := kubeConfig()
	cfg.Namespace = k.ns
	cfg.XDSAddress = "xds.example:18001"
	k.startKube(cfg, b)
	p := kubeProxy("team-a", "web.example")
	p.GatewayUid = "0b4b6b1a-5d07-4c32-a0a2-4bb9bd0e1c9e" // in another namespace: no owner reference
	putProxy(t, b, p)
	name := kube.ObjectName("team-a", "web.example", true)
	o := k.waitObjects(k.ns, name, "objects in the shared namespace", nil)
	checkMeta(t, o.dep.ObjectMeta, b.System(), "team-a", "web.example", "")
	checkConfigMap(t, &o.cm, "team-a/web.example", "xds.example:18001")
	deleteKey(t, b, "team-a", "web.example")
	k.waitGone(k.ns, name)
}

func TestKubernetesNoPortsAndInvalidProxy(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	k.startKube(kubeConfig(), b)
	p := kubeProxy(k.ns, "edge")
	putProxy(t, b, p)
	o := k.waitObjects(k.ns, "gatewire-edge", "objects of the gateway", nil)
	waitAddresses(t, b, k.ns, "edge", []string{o.svc.Spec.ClusterIP})

	// Without ports there is nothing to expose: the Service goes, and with
	// it the gateway's addresses; Envoy keeps running.
	p.Ports = nil
	putProxy(t, b, p)
	testkit.Eventually(t, waitTimeout, "Service removed", func() bool {
		_, n := k.get(k.ns, "gatewire-edge")
		return n == 3
	})
	waitAddresses(t, b, k.ns, "edge", nil)

	// A proxy that cannot be provisioned changes nothing; the next good one
	// is applied.
	p.Ports = []*busv1.ProxyPort{{Name: "sctp", Protocol: "SCTP", Port: 9000}}
	putProxy(t, b, p)
	putProxy(t, b, kubeProxy(k.ns, "barrier"))
	k.waitObjects(k.ns, "gatewire-barrier", "objects of the barrier gateway", nil)
	if _, n := k.get(k.ns, "gatewire-edge"); n != 3 {
		t.Errorf("%d objects after an invalid proxy, want the 3 from before", n)
	}
	putProxy(t, b, kubeProxy(k.ns, "edge"))
	k.waitObjects(k.ns, "gatewire-edge", "the Service back", nil)
}
