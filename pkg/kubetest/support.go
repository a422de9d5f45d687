package kubetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// gatewayAPIModule is the module the CRDs come from.
const gatewayAPIModule = "sigs.k8s.io/gateway-api"

// M is what TestMain runs: *testing.M, or the result of Wrap.
type M interface{ Run() int }

// Wrap returns an M that starts a server, stores it in *env, runs m and stops
// the server. When the server does not start, Run prints why on stderr and
// returns 1 without running a test:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(kubetest.Wrap(m, &kube)) }
func Wrap(m M, env **Env, opts ...Option) M {
	return &wrapped{m: m, env: env, opts: opts}
}

type wrapped struct {
	m    M
	env  **Env
	opts []Option
}

func (w *wrapped) Run() int {
	e, err := Start(w.opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*w.env = e
	code := w.m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Namespace creates a namespace with a generated name ("<prefix>-xxxxx") and
// returns its name. envtest runs no namespace controller, so namespaces are
// never deleted; they go with the server.
func (e *Env) Namespace(tb testing.TB, prefix string) string {
	tb.Helper()
	c, err := e.Client()
	if err != nil {
		tb.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Create(ctx, ns); err != nil {
		tb.Fatalf("create namespace %s-*: %v", prefix, err)
	}
	return ns.Name
}

// GatewayAPICRDs returns the folder of the experimental-channel CRDs of the
// sigs.k8s.io/gateway-api version compiled into the running binary.
func GatewayAPICRDs() (string, error) {
	dir, err := gatewayAPIDir()
	if err != nil {
		return "", err
	}
	crds := filepath.Join(dir, "config", "crd", "experimental")
	if _, err := os.Stat(crds); err != nil {
		return "", fmt.Errorf("kubetest: Gateway API CRDs: %w", err)
	}
	return crds, nil
}

// gatewayAPIDir returns the folder of the gateway-api module the binary was
// built with: from its build information when it has some (test binaries
// list no dependencies), else from `go list -m` in the working directory,
// which for a test is its package's folder.
func gatewayAPIDir() (string, error) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path != gatewayAPIModule {
				continue
			}
			if r := dep.Replace; r != nil {
				if r.Version == "" { // a local folder
					return r.Path, nil
				}
				return moduleDir(r.Path, r.Version)
			}
			return moduleDir(dep.Path, dep.Version)
		}
	}
	out, err := goCommand("", "list", "-m", "-f", "{{.Dir}}", gatewayAPIModule)
	if dir := string(bytes.TrimSpace(out)); err == nil && dir != "" {
		return dir, nil
	}
	return "", fmt.Errorf("kubetest: cannot find the folder of %s (go list -m: %v %s); is it a dependency of the module under test?", gatewayAPIModule, err, out)
}

// moduleDir returns the module cache folder of path@version, which `go mod
// download` fills if needed.
func moduleDir(path, version string) (string, error) {
	out, err := goCommand(os.TempDir(), "mod", "download", "-json", path+"@"+version)
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); jerr == nil && mod.Error != "" {
		return "", fmt.Errorf("kubetest: go mod download %s@%s: %s", path, version, mod.Error)
	}
	if err != nil {
		return "", fmt.Errorf("kubetest: go mod download %s@%s: %w", path, version, err)
	}
	if mod.Dir == "" {
		return "", fmt.Errorf("kubetest: go mod download %s@%s: no folder in %q", path, version, out)
	}
	return mod.Dir, nil
}

// goCommand runs the go command in dir ("" for the working directory; a
// folder outside any module runs without the workspace) and returns its
// standard output; the error holds its standard error.
func goCommand(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if dir != "" {
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, err
}

var loggerOnce sync.Once

// setLogger sets controller-runtime's global logger once per process.
func setLogger(log *logr.Logger) {
	loggerOnce.Do(func() {
		if log == nil {
			l := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
			log = &l
		}
		ctrllog.SetLogger(*log)
	})
}
