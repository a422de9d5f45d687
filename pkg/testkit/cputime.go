package testkit

import (
	"syscall"
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
