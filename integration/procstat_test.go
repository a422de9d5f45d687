package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// cpuSeconds is the CPU time (user and system) the process has used so
// far, from /proc/<pid>/stat.
func cpuSeconds(t testing.TB, p *proc) float64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("CPU time of %s: %v", p.name, err)
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'. utime and stime are fields 14 and 15.
	i := strings.LastIndexByte(string(data), ')')
	fields := strings.Fields(string(data)[i+1:])
	if i < 0 || len(fields) < 13 {
		t.Fatalf("CPU time of %s: /proc stat %q", p.name, data)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("CPU time of %s: /proc stat %q", p.name, data)
	}
	return (utime + stime) / clockTicks
}

// statusMiB reads a memory figure of the process from /proc/<pid>/status
// (VmRSS, VmHWM), in MiB.
func statusMiB(t testing.TB, p *proc, field string) float64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("memory of %s: %v", p.name, err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kB, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				t.Fatalf("memory of %s: %q: %v", p.name, line, err)
			}
			return kB / 1024
		}
	}
	t.Fatalf("memory of %s: no %s in /proc status", p.name, field)
	return 0
}

// saveProfile fetches path (a /debug/pprof profile) from an admin server
// into file. It logs, and does not fail, when it cannot: a profile is an
// aid to the figures, not one of them.
func saveProfile(t testing.TB, admin, path, file string, timeout time.Duration) {
	c := http.Client{Timeout: timeout}
	resp, err := c.Get("http://" + admin + path)
	if err != nil {
		t.Logf("profile %s of %s: %v", path, admin, err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Logf("profile %s of %s: %s %v", path, admin, resp.Status, err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err == nil {
		err = os.WriteFile(file, data, 0o644)
	}
	if err != nil {
		t.Logf("profile %s: %v", file, err)
	}
}
