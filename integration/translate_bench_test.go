package integration

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// translateRoutes is the size of BenchmarkTranslateProcess's input.
const translateRoutes = 10000

// BenchmarkTranslateProcess runs `gatewire translate` (read and validate
// every file, translate, print the status) as a process on 10,000 tenant
// routes, each in its own file, and reports its wall time, its CPU time
// (user and system) and its peak resident memory (the kernel's maxrss),
// with the load average.
func BenchmarkTranslateProcess(b *testing.B) {
	dir := b.TempDir()
	tenantFolder(b, dir, translateRoutes)
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, filepath.Join(binaries, "gatewire"), "translate", "-f", dir)
		began := time.Now()
		out, err := cmd.CombinedOutput()
		wall := time.Since(began)
		cancel()
		if err != nil {
			b.Fatalf("gatewire translate: %v\n%.2000s", err, out)
		}
		st := cmd.ProcessState
		cpu := (st.UserTime() + st.SystemTime()).Seconds()
		peak := float64(st.SysUsage().(*syscall.Rusage).Maxrss) / 1024 // kB on Linux
		load := testkit.LoadAverage(b)
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(cpu, "cpu-s")
		b.ReportMetric(peak, "peak-MiB")
		b.Log(fmt.Sprintf("\ngatewire translate, %d routes: %.2f s wall, %.2f s CPU, peak RSS %.0f MiB, load %.2f",
			translateRoutes, wall.Seconds(), cpu, peak, load))
	}
}
