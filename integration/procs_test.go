package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// binaries is where TestMain built the binaries under test.
var binaries string

// build compiles the binaries the tests run: the four services (the
// provider and infra twice: provider and infra with both modes,
// provider-file and infra-host with the mode for hosts only), the gatewire
// CLI and nats-server at the version the module
// pins. They are built as `make build` builds them (static, stripped,
// -trimpath, -tags grpcnotrace), so that the benchmarks measure the
// binaries users run.
func build() (string, error) {
	dir, err := os.MkdirTemp("", "gatewire-it-bin-")
	if err != nil {
		return "", err
	}
	targets := map[string]string{
		"provider":      "github.com/gatewire/gatewire/services/provider/cmd/provider",
		"provider-file": "github.com/gatewire/gatewire/services/provider/cmd/provider-file",
		"translator":    "github.com/gatewire/gatewire/services/translator/cmd/translator",
		"xds":           "github.com/gatewire/gatewire/services/xds/cmd/xds",
		"infra":         "github.com/gatewire/gatewire/services/infra/cmd/infra",
		"infra-host":    "github.com/gatewire/gatewire/services/infra/cmd/infra-host",
		"gatewire":      "github.com/gatewire/gatewire/cmd/gatewire",
		"nats-server":   "github.com/nats-io/nats-server/v2",
	}
	for name, pkg := range targets {
		cmd := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-ldflags=-s -w", "-o", filepath.Join(dir, name), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return dir, nil
}

// proc is one process under test, its output kept in a file that is printed
// when the test fails.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func start(t testing.TB, name string, env []string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binaries, binaryOf(name, env)), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("--- %s output ---\n%s", name, bytes.TrimSpace(out))
		}
	})
	return p
}

// binaryOf returns the binary a process named name runs with env: the
// service its name begins with, and for the provider and infra the binary
// of their mode: provider-file and infra-host in file and host mode, as on a
// host; provider and infra in kubernetes mode, as in a cluster.
func binaryOf(name string, env []string) string {
	for _, b := range []string{"provider", "translator", "xds", "infra", "gatewire", "nats-server"} {
		if !strings.HasPrefix(name, b) {
			continue
		}
		if b == "provider" && !slices.Contains(env, "GATEWIRE_PROVIDER_MODE=kubernetes") {
			return "provider-file"
		}
		if b == "infra" && !slices.Contains(env, "GATEWIRE_INFRA_MODE=kubernetes") {
			return "infra-host"
		}
		return b
	}
	return name
}

// stop ends the process with SIGTERM, then SIGKILL after 5s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) output() string {
	out, _ := os.ReadFile(p.log)
	return string(out)
}

// handedOut are the addresses freeAddr returned: the kernel may give a
// released port again, and two processes told the same address would fight
// over it.
var handedOut sync.Map

// freeAddr returns a loopback address with a port nobody listens on and that
// it never returned before.
func freeAddr(t testing.TB) string {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if _, taken := handedOut.LoadOrStore(addr, true); !taken {
			return addr
		}
	}
}

// waitReady polls a /readyz endpoint until it answers 200.
func waitReady(t testing.TB, p *proc, adminAddr string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+adminAddr+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before it was ready:\n%s", p.name, p.output())
		case <-ctx.Done():
			t.Fatalf("%s not ready on %s within %s:\n%s", p.name, adminAddr, timeout, p.output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitListening polls until addr accepts TCP connections.
func waitListening(t testing.TB, p *proc, addr string, timeout time.Duration) {
	t.Helper()
	testkit.EventuallyValue(t, timeout, fmt.Sprintf("%s to listen on %s", p.name, addr), func() (string, bool) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return "", true
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited:\n%s", p.name, p.output())
		default:
		}
		return "\n" + p.output(), false
	})
}
