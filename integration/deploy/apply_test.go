package deploy

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fieldOwner is the field manager of the tests' server-side applies.
const fieldOwner = "gatewire-deploy-test"

// warnings collects the warnings the API server returns, such as those of
// Pod Security admission about a workload's pods.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.list
	w.list = nil
	return l
}

// adminConfig returns an administrator's config without client-side rate
// limits, whose warnings go to w when w is not nil.
func adminConfig(t testing.TB, w *warnings) *rest.Config {
	t.Helper()
	cfg := rest.CopyConfig(apiServer(t).Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	if w != nil {
		cfg.WarningHandlerWithContext = w
	}
	return cfg
}

func newClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: apiServer(t).Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// apply server-side applies a copy of u, as a dry run when dryRun is set.
func apply(ctx context.Context, c client.Client, u *unstructured.Unstructured, dryRun bool) error {
	opts := []client.ApplyOption{client.ForceOwnership, client.FieldOwner(fieldOwner)}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), opts...)
}

// installFoundation applies the Namespace and the CRDs among objs for real,
// waits until the CRDs are established, and returns the other objects.
func installFoundation(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	var others, crds []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition":
			if err := apply(ctx, c, o, false); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
			if o.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, o)
			}
		default:
			others = append(others, o)
		}
	}
	if len(crds) == 0 {
		t.Fatal("no CustomResourceDefinitions rendered")
	}
	for _, crd := range crds {
		waitEstablished(ctx, t, c, crd.GetName())
	}
	return others
}

func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CustomResourceDefinition %s is not established: %v", name, err)
	}
}

// TestServerSideDryRun sends every rendered object of each overlay to the API
// server: the Namespace and the CRDs for real, the rest as a server-side
// dry run, which runs validation (the CRD schemas for the GatewayClass) and
// admission (Pod Security "restricted" for the workloads) without storing
// anything. Any error or warning fails the test.
func TestServerSideDryRun(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var w warnings
			c := newClient(t, adminConfig(t, &w))
			others := installFoundation(ctx, t, c, renderOverlay(t, overlay))
			for _, o := range others {
				if err := apply(ctx, c, o, true); err != nil {
					t.Errorf("dry run %s %s: %v", o.GetKind(), o.GetName(), err)
				}
				for _, text := range w.take() {
					t.Errorf("dry run %s %s: warning: %s", o.GetKind(), o.GetName(), text)
				}
			}
		})
	}
}

// TestDryRunSeesPodSecurity checks that the dry run above would notice an
// unsafe pod: the API server warns about a Deployment whose pods break the
// restricted Pod Security Standard of gatewire-system.
func TestDryRunSeesPodSecurity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var w warnings
	c := newClient(t, adminConfig(t, &w))
	installFoundation(ctx, t, c, renderOverlay(t, "dev"))
	w.take()
	labels := map[string]string{"app": "unsafe"}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "unsafe", Namespace: systemNamespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app"}}},
			},
		},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := apply(ctx, c, &unstructured.Unstructured{Object: m}, true); err != nil {
		t.Fatalf("dry run Deployment unsafe: %v", err)
	}
	got := strings.Join(w.take(), "\n")
	if !strings.Contains(got, `violate PodSecurity "restricted`) {
		t.Errorf("dry run of an unsafe Deployment: warnings %q, want a PodSecurity restricted warning", got)
	}
}
