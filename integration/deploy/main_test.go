package deploy

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// The API server the tests share, started by the first test that needs it:
// the tests of the manifests alone run without one.
var (
	kubeOnce sync.Once
	kube     *apiServerEnv
	kubeErr  error
)

// apiServer returns the shared API server, starting it on first use. It
// fails t when the server cannot start, for example without
// KUBEBUILDER_ASSETS (run `make envtest-assets`).
func apiServer(t testing.TB) *apiServerEnv {
	t.Helper()
	kubeOnce.Do(func() { kube, kubeErr = startAPIServer() })
	if kubeErr != nil {
		t.Fatal(kubeErr)
	}
	return kube
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testkit.After(m, func() error {
		if kube == nil {
			return nil
		}
		if err := kube.env.Stop(); err != nil {
			return fmt.Errorf("stop kube-apiserver and etcd: %w", err)
		}
		return nil
	}), testkit.IgnoreKlog(), testkit.IgnoreStoppedInformers())
}

// systemNamespace is where gatewire runs.
const systemNamespace = "gatewire-system"

// overlays are the folders under deploy/k8s/overlays.
var overlays = []string{"dev", "production"}

// k8sDir returns deploy/k8s of this checkout.
func k8sDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "deploy", "k8s"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// render builds the kustomization in dir (absolute) and returns its objects
// in kustomize's output order.
func render(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		// Through JSON, so that numbers are int64 as the API machinery wants.
		data, err := r.MarshalJSON()
		u := &unstructured.Unstructured{}
		if err == nil {
			err = u.UnmarshalJSON(data)
		}
		if err != nil {
			t.Fatalf("kustomize build %s: %s: %v", dir, r.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs
}

// renderOverlay renders deploy/k8s/overlays/<name>.
func renderOverlay(t testing.TB, name string) []*unstructured.Unstructured {
	t.Helper()
	return render(t, filepath.Join(k8sDir(t), "overlays", name))
}

// objects indexes rendered objects by "<Kind>/<name>".
type objects map[string]*unstructured.Unstructured

func index(objs []*unstructured.Unstructured) objects {
	idx := objects{}
	for _, o := range objs {
		idx[o.GetKind()+"/"+o.GetName()] = o
	}
	return idx
}

// decode converts the object named kind/name into out, strictly: a field the
// Go type does not know is an error, so a misspelt key fails the test.
func (idx objects) decode(t testing.TB, kind, name string, out any) {
	t.Helper()
	u, ok := idx[kind+"/"+name]
	if !ok {
		t.Fatalf("no %s %s among %s", kind, name, strings.Join(idx.names(), ", "))
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
}

// ofKind returns the names of the objects of kind, sorted.
func (idx objects) ofKind(kind string) []string {
	var names []string
	for _, o := range idx {
		if o.GetKind() == kind {
			names = append(names, o.GetName())
		}
	}
	sort.Strings(names)
	return names
}

func (idx objects) names() []string {
	var names []string
	for k := range idx {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
