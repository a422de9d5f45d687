package file_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/file"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// contract is how soon a change of the folder must reach the bus.
const contract = time.Second

// startTimeout bounds the initial publish, which has no contract of its own.
const startTimeout = 10 * time.Second

// env is one provider running over a folder and a real NATS server.
type env struct {
	t    *testing.T
	dir  string
	bus  *bus.Bus
	p    *file.Provider
	logs *testkit.LogBuffer
}

// newEnv returns an env over a fresh folder and bus; start runs it.
func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{t: t, dir: t.TempDir(), bus: bustest.New(t), logs: &testkit.LogBuffer{}}
}

// start runs a provider until stop is called or the test ends, and waits for
// it to be Ready.
func (e *env) start() (stop func()) {
	e.t.Helper()
	log := e.logs.JSONLogger(slog.LevelDebug)
	p, err := file.New(e.dir, e.bus, log)
	if err != nil {
		e.t.Fatal(err)
	}
	e.p = p
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run: %v", err)
		}
	})
	e.t.Cleanup(stop)
	e.eventually(startTimeout, "the provider is ready", p.Ready)
	return stop
}

// write writes a file of the folder.
func (e *env) write(name, content string) {
	e.t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// path is the path of a file of the folder as the provider names it.
func (e *env) path(name string) string { return filepath.Join(e.dir, name) }

// get returns the Resource under key, nil when there is none.
func (e *env) get(key string) (*busv1.Resource, uint64) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	entry, err := e.bus.Get(ctx, bus.Resources, key)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, 0
	}
	if err != nil {
		e.t.Fatalf("get %s: %v", key, err)
	}
	res, ok := entry.Value.(*busv1.Resource)
	if !ok {
		e.t.Fatalf("get %s: value is a %T", key, entry.Value)
	}
	return res, entry.Revision
}

// put writes a Resource as another writer would.
func (e *env) put(key string, res *busv1.Resource) uint64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rev, err := e.bus.Put(ctx, bus.Resources, key, res)
	if err != nil {
		e.t.Fatalf("put %s: %v", key, err)
	}
	return rev
}

// keys returns the object keys of the resources bucket (not the sync
// marks).
func (e *env) keys() map[string]bool {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := e.bus.Keys(ctx, bus.Resources, ">")
	if err != nil {
		e.t.Fatalf("keys: %v", err)
	}
	out := map[string]bool{}
	for _, k := range keys {
		if !strings.HasPrefix(k, bus.SyncKind+".") {
			out[k] = true
		}
	}
	return out
}

// eventually polls cond until it holds, failing the test after timeout.
func (e *env) eventually(timeout time.Duration, what string, cond func() bool) {
	e.t.Helper()
	testkit.Eventually(e.t, timeout, what, cond)
}

// object decodes the object JSON of res.
func object(t *testing.T, res *busv1.Resource) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.GetObject(), &m); err != nil {
		t.Fatalf("object of %s: %v", res.GetName(), err)
	}
	return m
}

// field returns obj[k1][k2]... as a string ("" when absent).
func field(obj map[string]any, keys ...string) any {
	var cur any = obj
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}
