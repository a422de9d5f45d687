// Package kubetest runs a real Kubernetes API server for tests: controller-
// runtime's envtest (kube-apiserver and etcd as processes on loopback) with
// the Gateway API CRDs installed.
//
// # Binaries
//
// envtest needs kube-apiserver and etcd binaries in the folder named by
// KUBEBUILDER_ASSETS. `make envtest-assets` builds them from the Go module
// proxy into a cache folder and prints it; `make test` exports
// KUBEBUILDER_ASSETS itself. When the variable is unset, or the server does
// not start, [Start] returns an error that says so: tests that need a server
// fail, they never skip.
//
// # One server per test package
//
// Starting a server takes seconds, so start one in TestMain and share it:
//
//	var kube *kubetest.Env
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Wrap(m, &kube).Run()) }
//
// Wrap's result also fits goleak.VerifyTestMain. Tests that share a server
// should create their objects in a namespace of their own ([Env.Namespace]).
// A package with a single test may call [New], which stops the server when
// the test ends.
//
// # CRDs
//
// The CRDs are those of the sigs.k8s.io/gateway-api module version compiled
// into the test binary, experimental channel, so that every kind the Go types
// know (TLSRoute, TCPRoute, UDPRoute, ListenerSet, ...) is served. The folder
// is found with `go mod download`, which reads the module cache; [WithCRDs]
// adds more folders or files.
//
// # Users
//
// [Env.Config] is an administrator (group system:masters). [Env.UserConfig]
// and [Env.UserClient] return credentials of any user and groups, signed by
// the server's client CA, so RBAC applies to them as in a real cluster: give
// them Roles and RoleBindings with the admin client.
//
// # Logs
//
// Start sets controller-runtime's global logger (log.SetLogger), once per
// process, to one that writes errors to stderr, unless WithLogger is given:
// otherwise controller-runtime prints a warning and a stack trace after 30
// seconds. An Env is safe for concurrent use once started.
package kubetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gatewayv1alpha3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// ErrNoAssets is returned by Start when KUBEBUILDER_ASSETS is unset or does
// not hold the binaries.
var ErrNoAssets = errors.New("no envtest binaries: run `make envtest-assets` and set KUBEBUILDER_ASSETS to the folder it prints (`make test` does both)")

// startTimeout bounds the start of etcd and of kube-apiserver each; a loaded
// two-core machine needs more than envtest's default of 20s.
const startTimeout = 90 * time.Second

// Env is a running API server.
type Env struct {
	// Config connects as an administrator (group system:masters).
	Config *rest.Config
	// Scheme is Scheme().
	Scheme *runtime.Scheme
	// KubeConfig is Config as a kubeconfig file's content, for programs
	// that read KUBECONFIG.
	KubeConfig []byte
	// CRDs lists the files and folders the CRDs were installed from.
	CRDs []string

	env *envtest.Environment
}

// Option changes how Start starts the server.
type Option func(*options)

type options struct {
	crds   []string
	logger *logr.Logger
}

// WithCRDs installs the CRDs of these files or folders too.
func WithCRDs(paths ...string) Option {
	return func(o *options) { o.crds = append(o.crds, paths...) }
}

// WithLogger sets controller-runtime's global logger to log instead of the
// default (errors to stderr).
func WithLogger(log logr.Logger) Option {
	return func(o *options) { o.logger = &log }
}

// Scheme returns a new scheme with the core Kubernetes kinds, CRDs
// (apiextensions.k8s.io/v1) and every version of the Gateway API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(gatewayv1.Install(s))
	utilruntime.Must(gatewayv1beta1.Install(s))
	utilruntime.Must(gatewayv1alpha3.Install(s))
	utilruntime.Must(gatewayv1alpha2.Install(s))
	return s
}

// Start starts an API server with the Gateway API CRDs and waits until they
// are served. The caller must call Stop. Errors say what to do: a missing
// KUBEBUILDER_ASSETS is ErrNoAssets.
func Start(opts ...Option) (*Env, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	setLogger(o.logger)
	if err := checkAssets(); err != nil {
		return nil, err
	}
	crdDir, err := GatewayAPICRDs()
	if err != nil {
		return nil, err
	}
	scheme := Scheme()
	external := false
	e := &Env{Scheme: scheme, CRDs: append([]string{crdDir}, o.crds...)}
	e.env = &envtest.Environment{
		Scheme:                   scheme,
		CRDDirectoryPaths:        e.CRDs,
		ErrorIfCRDPathMissing:    true,
		UseExistingCluster:       &external,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  startTimeout,
	}
	cfg, err := e.env.Start()
	if err != nil {
		// The control plane may be up even though Start failed (the CRDs
		// did not install, for example): stop what runs.
		_ = e.env.Stop()
		return nil, fmt.Errorf("kubetest: start kube-apiserver and etcd from KUBEBUILDER_ASSETS=%s (rebuild them with `make envtest-assets`): %w",
			os.Getenv("KUBEBUILDER_ASSETS"), err)
	}
	e.Config, e.KubeConfig = cfg, e.env.KubeConfig
	return e, nil
}

// checkAssets fails with ErrNoAssets unless KUBEBUILDER_ASSETS names a folder
// with both binaries.
func checkAssets() error {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return fmt.Errorf("kubetest: KUBEBUILDER_ASSETS is not set: %w", ErrNoAssets)
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return fmt.Errorf("kubetest: KUBEBUILDER_ASSETS=%s: %v: %w", dir, err, ErrNoAssets)
		}
	}
	return nil
}

// Stop stops the server and removes its files.
func (e *Env) Stop() error {
	if err := e.env.Stop(); err != nil {
		return fmt.Errorf("kubetest: stop: %w", err)
	}
	return nil
}

// New starts a server for tb and stops it when tb ends; it fails tb when the
// server does not start. Prefer one server per package (see Wrap).
func New(tb testing.TB, opts ...Option) *Env {
	tb.Helper()
	e, err := Start(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := e.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return e
}

// Client returns an administrator's client with the Env's scheme.
func (e *Env) Client() (client.Client, error) {
	return client.New(e.Config, client.Options{Scheme: e.Scheme})
}

// UserConfig returns a config that authenticates as user, member of groups
// (plus system:authenticated, which the server adds), with a client
// certificate signed by the server's CA. RBAC decides what it may do.
func (e *Env) UserConfig(user string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: user, Groups: groups}, &rest.Config{QPS: e.Config.QPS, Burst: e.Config.Burst})
	if err != nil {
		return nil, fmt.Errorf("kubetest: add user %q: %w", user, err)
	}
	return u.Config(), nil
}

// UserClient returns a client for user and groups (see UserConfig) with the
// Env's scheme.
func (e *Env) UserClient(user string, groups ...string) (client.Client, error) {
	cfg, err := e.UserConfig(user, groups...)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: e.Scheme})
}

// InstallCRDs installs the CRDs of these files or folders (again) and waits
// until they are served; for tests that remove a CRD to see what happens.
func (e *Env) InstallCRDs(paths ...string) error {
	_, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{
		Paths: paths, Scheme: e.Scheme, ErrorIfPathMissing: true,
	})
	if err != nil {
		return fmt.Errorf("kubetest: install CRDs %v: %w", paths, err)
	}
	return nil
}
