package testkit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "case.out.yaml")
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := &recorder{TB: t}
	Golden(same, path, []byte("a: 1\n"))
	differs := &recorder{TB: t}
	Golden(differs, path, []byte("a: 2\n"))
	missing := &recorder{TB: t}
	Golden(missing, path+".none", nil)
	if len(same.errors) != 0 || len(differs.errors) != 1 || !missing.fatal {
		t.Fatalf("equal: %q, different: %q, missing: %q", same.errors, differs.errors, missing.errors)
	}
	if !strings.Contains(differs.errors[0], path) || !strings.Contains(missing.errors[0], "-update") {
		t.Errorf("the failures name neither the file nor -update: %q %q", differs.errors, missing.errors)
	}
}

func TestLogBufferConcurrent(t *testing.T) {
	var b LogBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { b.Logger(0).Info("config pushed", "gateway", fmt.Sprintf("gw-%d", i)) })
	}
	wg.Wait()
	if got := len(b.Lines("config pushed")); got != 8 {
		t.Errorf("%d lines, want 8:\n%s", got, b.String())
	}
	if !b.Has("gw-3", "config pushed") || b.Has("gw-3", "gw-4") {
		t.Errorf("Has: wrong answer on\n%s", b.String())
	}
}

func TestLogBufferJSONLines(t *testing.T) {
	var b LogBuffer
	log := b.JSONLogger(0)
	log.Info("config pushed", "gateway", "a")
	log.Warn("stream closed", "gateway", "b")
	_, _ = b.Write([]byte("not json\n"))
	log.Info("config pushed", "gateway", "c")
	all, pushed := b.JSONLines(""), b.JSONLines("config pushed")
	if len(all) != 3 || len(pushed) != 2 || pushed[1]["gateway"] != "c" {
		t.Errorf("JSONLines: all %v, pushed %v", all, pushed)
	}
}

func TestEventually(t *testing.T) {
	start := time.Now()
	n := 0
	Eventually(t, time.Second, "the third call", func() bool { n++; return n == 3 })
	if n != 3 || time.Since(start) > 500*time.Millisecond {
		t.Errorf("%d calls in %s", n, time.Since(start))
	}
	r := &recorder{TB: t}
	v := EventuallyValue(r, 50*time.Millisecond, "a value over 10", func() (int, bool) { return 7, false })
	if v != 7 || !r.fatal || !strings.Contains(r.errors[0], "a value over 10") || !strings.Contains(r.errors[0], "last: 7") {
		t.Errorf("got %d, failures %q", v, r.errors)
	}
}

// TestEchoChild is the body of TestStartChild's child: it echoes its
// standard input in upper case and logs to its standard error.
func TestEchoChild(t *testing.T) {
	if !InChild("TestEchoChild") {
		return
	}
	fmt.Fprintln(os.Stderr, "child started with", os.Getenv("ECHO_EXTRA"), os.Getenv("GRPC_XDS_BOOTSTRAP_CONFIG"))
	data, _ := io.ReadAll(os.Stdin)
	fmt.Println("ECHO " + strings.ToUpper(string(data)))
}

func TestStartChild(t *testing.T) {
	c := StartChild(t, ChildOptions{Test: "TestEchoChild", XDSBootstrap: []byte(`{"node":{}}`), Env: []string{"ECHO_EXTRA=yes"}, Stdout: true})
	if _, err := io.WriteString(c.Stdin, "hello"); err != nil {
		t.Fatal(err)
	}
	_ = c.Stdin.Close()
	var got string
	for c.Stdout.Scan() {
		if s, ok := strings.CutPrefix(c.Stdout.Text(), "ECHO "); ok {
			got = s
		}
	}
	if got != "HELLO" {
		t.Errorf("the child answered %q, want HELLO; its logs:\n%s", got, c.Logs)
	}
	Eventually(t, 5*time.Second, "the child's log line", func() bool { return c.Logs.Has(`child started with yes {"node":{}}`) })
}

type runs struct{ code int }

func (r runs) Run() int { return r.code }

func TestAfter(t *testing.T) {
	cleaned := 0
	ok := After(runs{0}, func() error { cleaned++; return nil }).Run()
	failed := After(runs{0}, func() error { cleaned++; return fmt.Errorf("stop: refused") }).Run()
	kept := After(runs{3}, func() error { cleaned++; return nil }).Run()
	if ok != 0 || failed != 1 || kept != 3 || cleaned != 3 {
		t.Errorf("codes %d %d %d after %d cleanups; want 0 1 3 after 3", ok, failed, kept, cleaned)
	}
}
