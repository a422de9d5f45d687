package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// writeManyRoutes writes the input of the translator's BenchmarkTranslate
// with n routes to a file of tb's and returns its path.
func writeManyRoutes(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "routes.yaml")
	if err := os.WriteFile(path, []byte(gatewaytest.ManyRoutes(n)), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestTranslateManyRoutes runs the whole command on 1,000 routes (100 under
// the race detector, which slows validation tenfold) and reports its wall and
// CPU time; every route must be accepted.
func TestTranslateManyRoutes(t *testing.T) {
	n := 1000
	if raceEnabled {
		n = 100
	}
	in := writeManyRoutes(t, n)
	var stdout, stderr bytes.Buffer
	opts := translateOptions{inputs: inputs{in}, controller: gatewayclass.DefaultControllerName, output: "status", format: "yaml", verbose: true}
	start, cpu := time.Now(), cpuTime()
	if err := translate(context.Background(), opts, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d routes: wall %v, CPU %v (%.0f MB printed)\n%s", n, time.Since(start).Round(time.Millisecond),
		(cpuTime() - cpu).Round(time.Millisecond), float64(stdout.Len())/1e6, stderr.String())
	out := stdout.String()
	if got := strings.Count(out, "message: Route is accepted"); got != n {
		t.Errorf("%d routes accepted, want %d", got, n)
	}
	if want := fmt.Sprintf("attachedRoutes: %d\n", n); !strings.Contains(out, want) {
		t.Errorf("the listener does not say %q", want)
	}
}

// BenchmarkTranslateCommand runs the whole command (read, validate, index,
// translate, print the status) on 1,000 routes; the validation schemas are
// compiled in the first iteration only, as in a process.
func BenchmarkTranslateCommand(b *testing.B) {
	in := writeManyRoutes(b, 1000)
	opts := translateOptions{inputs: inputs{in}, controller: gatewayclass.DefaultControllerName, output: "status", format: "yaml"}
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if err := translate(context.Background(), opts, nil, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(testkit.LoadAverage(b), "load1")
}
