package service

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// sampleChildEnv makes the test binary a child of TestSampleAllocations
// (see init).
const sampleChildEnv = "GATEWIRE_TEST_SAMPLE_ALLOCATIONS"

// TestSampleAllocations runs SampleAllocations in child processes (it
// sets a process-wide rate, once) and checks the rate each is left with.
func TestSampleAllocations(t *testing.T) {
	for _, tc := range []struct {
		on, godebug string
		want        string
	}{
		{"false", "", "rate 0"},
		{"true", "", fmt.Sprintf("rate %d", runtime.MemProfileRate)},
		{"false", "memprofilerate=4096", "rate 4096"},
	} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), sampleChildEnv+"="+tc.on, "GODEBUG="+tc.godebug)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), tc.want+"\n") {
			t.Errorf("SampleAllocations(%s) with GODEBUG=%q: %s, want %q", tc.on, tc.godebug, out, tc.want)
		}
	}
}

// init is the child of TestSampleAllocations: it calls SampleAllocations
// as the environment says, prints the rate that results and exits before
// any test runs.
func init() {
	on := os.Getenv(sampleChildEnv)
	if on == "" {
		return
	}
	SampleAllocations(on == "true")
	SampleAllocations(true) // the first call counts
	fmt.Printf("rate %d\n", runtime.MemProfileRate)
	os.Exit(0)
}
