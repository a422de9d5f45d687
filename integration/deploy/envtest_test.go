package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// errNoAssets says what to do when the envtest binaries are missing.
var errNoAssets = errors.New("no envtest binaries: run `make envtest-assets` and set KUBEBUILDER_ASSETS to the folder it prints (`make test` does both)")

// startTimeout bounds the start of etcd and of kube-apiserver each; a loaded
// two-core machine needs more than envtest's default of 20s.
const startTimeout = 90 * time.Second

// apiServerEnv is a kube-apiserver and etcd started by envtest with no CRDs:
// the tests install the CRDs of deploy/ themselves, as a user would.
type apiServerEnv struct {
	env    *envtest.Environment
	Config *rest.Config // an administrator (group system:masters)
	Scheme *runtime.Scheme
}

func startAPIServer() (*apiServerEnv, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: %w", errNoAssets)
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return nil, fmt.Errorf("KUBEBUILDER_ASSETS=%s: %v: %w", dir, err, errNoAssets)
		}
	}
	// controller-runtime complains, with a stack trace, when no logger is set.
	ctrllog.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	external := false
	env := &envtest.Environment{
		Scheme:                   scheme,
		UseExistingCluster:       &external,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  startTimeout,
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop() // what started keeps running otherwise
		return nil, fmt.Errorf("start kube-apiserver and etcd from KUBEBUILDER_ASSETS=%s (rebuild them with `make envtest-assets`): %w", dir, err)
	}
	return &apiServerEnv{env: env, Config: cfg, Scheme: scheme}, nil
}

// Namespace creates a namespace named "<prefix>-<random>" and returns its
// name. envtest runs no namespace controller: it is never deleted.
func (e *apiServerEnv) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := newClient(t, adminConfig(t, nil)).Create(ctx, ns); err != nil {
		t.Fatalf("create namespace %s-*: %v", prefix, err)
	}
	return ns.Name
}
