package testkit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CPUTime is the user and system CPU time of the process so far, all
// goroutines and the garbage collector included: on a shared machine a
// steadier measure of work than the wall clock. Benchmarks report it per
// operation beside ns/op.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LoadAverage is the machine's load average over the last minute, from
// /proc/loadavg, which every benchmark figure is printed beside; it fails
// the test when the file cannot be read.
func LoadAverage(tb testing.TB) float64 {
	tb.Helper()
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		tb.Fatal(err)
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		tb.Fatalf("/proc/loadavg is empty")
	}
	f, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		tb.Fatalf("/proc/loadavg %q: %v", data, err)
	}
	return f
}
