package deploy

import (
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
)

// service is what the manifests of one gatewire service must say.
type service struct {
	name      string
	adminPort int32
	env       map[string]string // besides the variables every service gets
	kubeAPI   bool              // whether it talks to the Kubernetes API
}

var services = []service{
	{name: "provider", adminPort: 19001, kubeAPI: true,
		env: map[string]string{"GATEWIRE_PROVIDER_MODE": "kubernetes"}},
	{name: "translator", adminPort: 19002},
	{name: "xds", adminPort: 19003,
		env: map[string]string{
			"GATEWIRE_XDS_ADDRESS": ":18000",
			// the files of the Secret gatewire-xds-tls, mounted there
			"GATEWIRE_XDS_TLS_CERT": "/etc/gatewire/xds-tls/tls.crt",
			"GATEWIRE_XDS_TLS_KEY":  "/etc/gatewire/xds-tls/tls.key",
			"GATEWIRE_XDS_TLS_CA":   "/etc/gatewire/xds-tls/ca.crt",
		}},
	{name: "infra", adminPort: 19004, kubeAPI: true,
		env: map[string]string{
			"GATEWIRE_INFRA_MODE":        "kubernetes",
			"GATEWIRE_INFRA_XDS_ADDRESS": "gatewire-xds.gatewire-system.svc.cluster.local:18000",
		}},
}

// shape is what differs between the overlays.
type shape struct {
	replicas     map[string]int32 // Deployment or StatefulSet → replicas, or autoscaled
	natsReplicas string           // GATEWIRE_NATS_REPLICAS of every service
	hpaMin       int32            // the translator's autoscaler's floor; 0 for no autoscaler
}

// autoscaled marks a Deployment whose count an autoscaler owns: it leaves
// spec.replicas out, so that applying the manifests again does not reset it.
const autoscaled = -1

var shapes = map[string]shape{
	"dev": {
		replicas: map[string]int32{
			"gatewire-provider": 1, "gatewire-translator": 1, "gatewire-xds": 1, "gatewire-infra": 1,
			"nats": 1, "nats-box": 1,
		},
		natsReplicas: "1",
	},
	"production": {
		replicas: map[string]int32{
			"gatewire-provider": 2, "gatewire-translator": autoscaled, "gatewire-xds": 2, "gatewire-infra": 2,
			"nats": 3, "nats-box": 1,
		},
		natsReplicas: "3",
		hpaMin:       3,
	},
}

// workload is a Deployment or a StatefulSet.
type workload struct {
	kind     string
	replicas int32 // autoscaled when spec.replicas is left out
	selector *metav1.LabelSelector
	pod      corev1.PodTemplateSpec
}

// workloads decodes every Deployment and StatefulSet, by name.
func workloads(t *testing.T, idx objects) map[string]workload {
	t.Helper()
	out := map[string]workload{}
	for _, name := range idx.ofKind("Deployment") {
		var d appsv1.Deployment
		idx.decode(t, "Deployment", name, &d)
		replicas := int32(autoscaled)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		out[name] = workload{"Deployment", replicas, d.Spec.Selector, d.Spec.Template}
	}
	for _, name := range idx.ofKind("StatefulSet") {
		var s appsv1.StatefulSet
		idx.decode(t, "StatefulSet", name, &s)
		out[name] = workload{"StatefulSet", deref(s.Spec.Replicas), s.Spec.Selector, s.Spec.Template}
	}
	return out
}

// deref reads replicas, which default to 1.
func deref(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func TestOverlayShape(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			want := shapes[overlay]
			idx := index(renderOverlay(t, overlay))
			ws := workloads(t, idx)
			checkReplicas(t, ws, want)
			for name, w := range ws {
				checkPod(t, name, w.pod)
				checkPDB(t, idx, name, w)
			}
			for _, s := range services {
				checkService(t, idx, ws, s, want)
			}
			checkHPA(t, idx, want)
			checkNamespaces(t, idx)
			checkNATS(t, idx, ws)
			var gc gatewayv1.GatewayClass
			idx.decode(t, "GatewayClass", "gatewire", &gc)
			if gc.Spec.ControllerName != gatewayclass.DefaultControllerName {
				t.Errorf("GatewayClass gatewire: controllerName %q", gc.Spec.ControllerName)
			}
		})
	}
}

func checkReplicas(t *testing.T, ws map[string]workload, want shape) {
	t.Helper()
	for name, n := range want.replicas {
		w, ok := ws[name]
		if !ok {
			t.Errorf("no Deployment or StatefulSet %s", name)
			continue
		}
		if w.replicas != n {
			t.Errorf("%s %s: %d replicas, want %d", w.kind, name, w.replicas, n)
		}
	}
	if len(ws) != len(want.replicas) {
		t.Errorf("%d workloads, want %d (%v)", len(ws), len(want.replicas), want.replicas)
	}
}

// checkPod checks what every pod of gatewire must have: non-root, read-only
// root filesystem, no capabilities, the runtime's seccomp profile, resource
// requests and limits, and probes (the nats-box tool and the certgen Job
// have none: they serve nothing).
func checkPod(t *testing.T, name string, pod corev1.PodTemplateSpec) {
	t.Helper()
	ps := pod.Spec.SecurityContext
	if ps == nil || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod seccompProfile is not RuntimeDefault", name)
	}
	podNonRoot := ps != nil && ps.RunAsNonRoot != nil && *ps.RunAsNonRoot
	if len(pod.Spec.InitContainers) > 0 {
		t.Errorf("%s: init containers are not checked; check them", name)
	}
	for _, c := range pod.Spec.Containers {
		where := fmt.Sprintf("%s container %s", name, c.Name)
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s: no securityContext", where)
			continue
		}
		if !podNonRoot && (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) {
			t.Errorf("%s: runAsNonRoot is not set", where)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: root filesystem is writable", where)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation is not false", where)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s: capabilities %+v, want drop ALL and add none", where, sc.Capabilities)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if c.Resources.Requests.Name(r, "").IsZero() || c.Resources.Limits.Name(r, "").IsZero() {
				t.Errorf("%s: no %s request or limit", where, r)
			}
		}
		if name != "nats-box" && name != "gatewire-certgen" && (c.LivenessProbe == nil || c.ReadinessProbe == nil) {
			t.Errorf("%s: liveness or readiness probe missing", where)
		}
	}
}

// checkPDB checks that a PodDisruptionBudget covers the pods of w and lets
// one go at a time.
func checkPDB(t *testing.T, idx objects, name string, w workload) {
	t.Helper()
	if name == "nats-box" {
		return
	}
	var pdb policyv1.PodDisruptionBudget
	idx.decode(t, "PodDisruptionBudget", name, &pdb)
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		t.Fatalf("PodDisruptionBudget %s: %v", name, err)
	}
	if sel.Empty() || !sel.Matches(labels.Set(w.pod.Labels)) {
		t.Errorf("PodDisruptionBudget %s: selector %s does not select the pods of %s", name, sel, name)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget %s: maxUnavailable %v, want 1", name, pdb.Spec.MaxUnavailable)
	}
}

func checkHPA(t *testing.T, idx objects, want shape) {
	t.Helper()
	hpas := idx.ofKind("HorizontalPodAutoscaler")
	if want.hpaMin == 0 {
		if len(hpas) > 0 {
			t.Errorf("HorizontalPodAutoscalers %v, want none", hpas)
		}
		return
	}
	if !slices.Equal(hpas, []string{"gatewire-translator"}) {
		t.Fatalf("HorizontalPodAutoscalers %v, want gatewire-translator", hpas)
	}
	u := idx["HorizontalPodAutoscaler/gatewire-translator"]
	if u.GetAPIVersion() != "autoscaling/v2" {
		t.Errorf("HorizontalPodAutoscaler: apiVersion %s, want autoscaling/v2", u.GetAPIVersion())
	}
	var hpa autoscalingv2.HorizontalPodAutoscaler
	idx.decode(t, "HorizontalPodAutoscaler", "gatewire-translator", &hpa)
	ref := hpa.Spec.ScaleTargetRef
	if ref.Kind != "Deployment" || ref.Name != "gatewire-translator" {
		t.Errorf("HorizontalPodAutoscaler scales %s %s", ref.Kind, ref.Name)
	}
	if deref(hpa.Spec.MinReplicas) != want.hpaMin || hpa.Spec.MaxReplicas <= want.hpaMin {
		t.Errorf("HorizontalPodAutoscaler: replicas %d to %d, want from %d up",
			deref(hpa.Spec.MinReplicas), hpa.Spec.MaxReplicas, want.hpaMin)
	}
	if want.replicas["gatewire-translator"] != autoscaled {
		t.Errorf("the translator has an autoscaler: its Deployment must leave spec.replicas out")
	}
	if len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Resource == nil || hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
		t.Errorf("HorizontalPodAutoscaler: metrics %+v, want CPU only", hpa.Spec.Metrics)
	}
}

// checkNamespaces checks that every namespaced object is in gatewire-system
// and that the namespace itself is rendered.
func checkNamespaces(t *testing.T, idx objects) {
	t.Helper()
	if _, ok := idx["Namespace/"+systemNamespace]; !ok {
		t.Errorf("no Namespace %s", systemNamespace)
	}
	clusterScoped := map[string]bool{
		"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
		"GatewayClass": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	}
	for key, o := range idx {
		if clusterScoped[o.GetKind()] != (o.GetNamespace() == "") {
			t.Errorf("%s: namespace %q", key, o.GetNamespace())
		}
		if o.GetNamespace() != "" && o.GetNamespace() != systemNamespace {
			t.Errorf("%s: namespace %q, want %s", key, o.GetNamespace(), systemNamespace)
		}
	}
}
