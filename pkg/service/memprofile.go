package service

import (
	"os"
	"runtime"
	"strings"
	"sync"
)

var sampling sync.Once

// SampleAllocations turns the runtime's allocation sampling (the heap
// profile) off unless the profiles are served (on: GATEWIRE_ADMIN_PPROF) or
// GODEBUG sets memprofilerate. Nothing else reads the samples, and their
// table of call stacks holds about 1 MiB resident in each process. Call it
// first thing in main: the samples taken before stay. Only the first call
// of a process counts.
func SampleAllocations(on bool) {
	sampling.Do(func() {
		if !on && !strings.Contains(os.Getenv("GODEBUG"), "memprofilerate=") {
			runtime.MemProfileRate = 0
		}
	})
}
