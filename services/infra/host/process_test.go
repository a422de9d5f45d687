package host_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/host"
)

// fakeEnvoyEnv, when set to a folder, makes the test binary act as envoy: it
// takes Envoy's flags, reads and validates the bootstrap, records what it was
// started with in <folder>/<pid>.started, waits for SIGTERM and records
// <folder>/<pid>.stopped.
const fakeEnvoyEnv = "GATEWIRE_TEST_FAKE_ENVOY_DIR"

// envoyRun is what the fake envoy records.
type envoyRun struct {
	PID         int    `json:"pid"`
	Config      string `json:"config"`
	BaseID      int    `json:"baseID"`
	NodeCluster string `json:"nodeCluster"`
}

func fakeEnvoy(dir string, args []string) int {
	fs := flag.NewFlagSet("envoy", flag.ContinueOnError)
	config := fs.String("c", "", "bootstrap")
	baseID := fs.Int("base-id", 0, "base id")
	adminPath := fs.String("admin-address-path", "", "admin address file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	data, err := os.ReadFile(*config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, err := bootstrap.Unmarshal(data)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(*adminPath, []byte("127.0.0.1:0\n"), 0o644); err != nil {
		return 1
	}
	run, _ := json.Marshal(envoyRun{PID: os.Getpid(), Config: *config, BaseID: *baseID, NodeCluster: b.GetNode().GetCluster()})
	record := filepath.Join(dir, fmt.Sprint(os.Getpid()))
	// Written aside and renamed, so the test never reads half a record.
	if err := os.WriteFile(record+".tmp", run, 0o644); err != nil {
		return 1
	}
	if err := os.Rename(record+".tmp", record+".started"); err != nil {
		return 1
	}
	<-stop
	if err := os.WriteFile(record+".stopped", nil, 0o644); err != nil {
		return 1
	}
	return 0
}

// envoys lists the fake envoys started so far, and whether each stopped.
func envoys(t *testing.T, dir string) map[envoyRun]bool {
	t.Helper()
	started, err := filepath.Glob(filepath.Join(dir, "*.started"))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[envoyRun]bool{}
	for _, f := range started {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r envoyRun
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		_, err = os.Stat(f[:len(f)-len(".started")] + ".stopped")
		runs[r] = err == nil
	}
	return runs
}

// running returns the running fake envoys of a node cluster.
func running(t *testing.T, dir, cluster string) []envoyRun {
	var out []envoyRun
	for r, stopped := range envoys(t, dir) {
		if r.NodeCluster == cluster && !stopped {
			out = append(out, r)
		}
	}
	return out
}

// waitRunning waits until exactly one fake envoy of cluster runs, other than
// those in not, and returns it.
func waitRunning(t *testing.T, dir, cluster string, not ...envoyRun) envoyRun {
	t.Helper()
	return testkit.EventuallyValue(t, 20*time.Second, "a single new envoy of "+cluster+" running", func() (envoyRun, bool) {
		rs := running(t, dir, cluster)
		if len(rs) == 1 && !contains(not, rs[0]) {
			return rs[0], true
		}
		return envoyRun{}, false
	})
}

func contains(runs []envoyRun, r envoyRun) bool {
	for _, x := range runs {
		if x == r {
			return true
		}
	}
	return false
}

// envoyHost is a Provisioner whose envoy binary is the fake envoy.
type envoyHost struct {
	p       *host.Provisioner
	records string
}

func newEnvoyHost(t *testing.T) envoyHost {
	records := t.TempDir()
	t.Setenv(fakeEnvoyEnv, records)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := newProvisioner(t, host.Options{EnvoyPath: self, AdminPort: 0, Output: testkit.TestWriter{T: t}})
	return envoyHost{p: p, records: records}
}

func (h envoyHost) apply(t *testing.T, gateway string) {
	t.Helper()
	if err := h.p.Apply(context.Background(), proxy("default", gateway)); err != nil {
		t.Fatal(err)
	}
}

func (h envoyHost) stopped(t *testing.T, r envoyRun) bool {
	return envoys(t, h.records)[r]
}

func adminFile(r envoyRun) string {
	return strings.TrimSuffix(r.Config, ".yaml") + ".admin"
}

func TestEnvoyProcesses(t *testing.T) {
	h := newEnvoyHost(t)
	h.apply(t, "one")
	h.apply(t, "two")
	one := waitRunning(t, h.records, "default/one")
	two := waitRunning(t, h.records, "default/two")
	if one.BaseID != 1 || two.BaseID != 2 || one.Config != h.p.Path("default", "one") {
		t.Errorf("runs %+v %+v: want base ids 1 and 2 and -c the bootstrap", one, two)
	}
	if _, err := os.Stat(adminFile(one)); err != nil {
		t.Errorf("admin address file: %v", err)
	}
	t.Run("unchanged bootstrap keeps the envoy", func(t *testing.T) {
		h.apply(t, "one")
		if rs := running(t, h.records, "default/one"); len(rs) != 1 || rs[0] != one {
			t.Errorf("envoys of default/one: %v, want only %v", rs, one)
		}
	})
	t.Run("changed bootstrap restarts the envoy", func(t *testing.T) {
		if err := os.WriteFile(one.Config, []byte("# gatewire-gateway: default/one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		h.apply(t, "one")
		if !h.stopped(t, one) {
			t.Errorf("old envoy of default/one not stopped")
		}
		one = waitRunning(t, h.records, "default/one", one)
	})
	t.Run("an envoy that dies is started again", func(t *testing.T) {
		two = testRestart(t, h, two)
	})
	t.Run("remove stops the envoy", func(t *testing.T) {
		if err := h.p.Remove(context.Background(), "default", "two"); err != nil {
			t.Fatal(err)
		}
		if !h.stopped(t, two) {
			t.Errorf("envoy of default/two not stopped")
		}
		if _, err := os.Stat(adminFile(two)); !os.IsNotExist(err) {
			t.Errorf("admin address file of default/two: %v, want removed", err)
		}
	})
	if err := h.p.Close(); err != nil {
		t.Fatal(err)
	}
	if !h.stopped(t, one) {
		t.Errorf("Close did not stop the envoy of default/one")
	}
}

// testRestart kills run and checks that its gateway gets a new envoy with the
// same base id, which it returns.
func testRestart(t *testing.T, h envoyHost, run envoyRun) envoyRun {
	if err := syscall.Kill(run.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// A killed envoy cannot record that it stopped.
	if err := os.WriteFile(filepath.Join(h.records, fmt.Sprint(run.PID)+".stopped"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	again := waitRunning(t, h.records, run.NodeCluster, run)
	if again.BaseID != run.BaseID {
		t.Errorf("restarted with base id %d, want %d", again.BaseID, run.BaseID)
	}
	return again
}
