package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Memory is how a service keeps its resident memory close to its live heap.
//
// The Go runtime gives memory back to the system slowly: a service that
// loaded, compiled or translated a lot at start holds that peak for
// minutes while its live heap is a fraction of it. So, once the service is
// ready (its initial load done), and then every Trim interval in which the
// heap holds at least TrimFree of free pages, the runner collects and
// returns the free pages at once (debug.FreeOSMemory: one collection, a
// few milliseconds for a live heap of tens of MiB).
//
// Caches let go of memory some time after the work that filled them, and
// nothing then makes the heap's free pages reach TrimFree: the embedded
// NATS server's file store puts the blocks it wrote (12 MiB at 1,000
// routes) back in its sync.Pools 10 s after its last write, and a pool's
// contents go with the second collection after that (the first keeps them
// in its victim cache). So the settleTrims intervals after a trim trim
// again, whatever is free. Standalone on 1,000 routes came down from 145
// to 134 MiB four minutes after its load without them (the runtime's
// periodic collections), 20 to 25 s after it with them.
//
// A trim waits until the process is quiet: less than quietAlloc allocated
// over the last quietWindow (an idle service allocates 5 to 25 KiB a
// second), or trimMaxWait at most. A trim during work delays it: the
// collection competes for the CPU, and the pages returned are faulted in
// again by the next allocations. The first route edit after a load of
// 3,000 routes took 23 to 26 ms with the trim at readiness, 11 to 14 ms
// without it.
//
// Limit sets the runtime's soft memory limit (as GOMEMLIMIT does) unless
// GOMEMLIMIT is set; in Kubernetes set it to about 90% of the container's
// memory limit.
type Memory struct {
	Limit    string        `envconfig:"MEMORY_LIMIT" desc:"soft memory limit of the Go runtime, such as 200MiB (GOMEMLIMIT wins when set); empty: none"`
	Trim     time.Duration `envconfig:"MEMORY_TRIM_INTERVAL" default:"10s" desc:"how often free heap pages are returned to the system (after the initial load, then when at least GATEWIRE_MEMORY_TRIM_FREE are free, and in the two intervals after each of those), each time once the service has been quiet for half a second (or after a minute); 0 turns trimming off"`
	TrimFree string        `envconfig:"MEMORY_TRIM_FREE" default:"4MiB" desc:"free heap that makes a trim worth its collection"`
}

// Validate checks the values; errors name the variable.
func (m Memory) Validate() error {
	if _, err := ParseBytes(m.Limit); err != nil {
		return fmt.Errorf("%s_MEMORY_LIMIT: %q: %v", Prefix, m.Limit, err)
	}
	if m.Trim < 0 {
		return fmt.Errorf("%s_MEMORY_TRIM_INTERVAL: %v: want 0 or more", Prefix, m.Trim)
	}
	if _, err := ParseBytes(m.TrimFree); err != nil {
		return fmt.Errorf("%s_MEMORY_TRIM_FREE: %q: %v", Prefix, m.TrimFree, err)
	}
	return nil
}

// ParseBytes reads "", a number of bytes, or one with a KiB, MiB or GiB
// suffix ("" is 0), as GATEWIRE_MEMORY_LIMIT and the CLI's -memory-limit
// take them.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a size such as 200MiB")
	}
	return n * mult, nil
}

// Runner returns a Runner that applies the limit and trims the heap as
// described on [Memory]; ready is the service's readiness. It is always
// ready itself. m must have been validated.
func (m Memory) Runner(ready func() bool, log *slog.Logger) Runner {
	return runFunc{run: func(ctx context.Context) error { return m.run(ctx, ready, log) }, ready: func() bool { return true }}
}

// When a trim is due, it waits for a quiet process: see [Memory].
const (
	quietWindow = 500 * time.Millisecond
	quietAlloc  = 64 << 10
	trimMaxWait = time.Minute
	// quietSample is how often the allocations are read.
	quietSample = 100 * time.Millisecond
	// settleTrims is how many intervals after a trim trim again.
	settleTrims = 2
)

func (m Memory) run(ctx context.Context, ready func() bool, log *slog.Logger) error {
	if limit, _ := ParseBytes(m.Limit); limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
		log.Info("memory limit set", "bytes", limit)
	}
	if m.Trim == 0 {
		<-ctx.Done()
		return nil
	}
	for !ready() {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	minFree, _ := ParseBytes(m.TrimFree)
	var q quiet
	due, dueSince := "initial load", time.Now() // the trim waiting for quiet; "" for none
	settling := 0                               // the settling trims still to come
	// The allocations are sampled only while a trim is due: an idle
	// service wakes once per interval, not ten times a second.
	timer := time.NewTimer(quietSample)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-timer.C:
			if due == "" {
				switch {
				case heapFree() >= uint64(minFree):
					due = "interval"
				case settling > 0:
					due, settling = "settling", settling-1
				default:
					timer.Reset(m.Trim)
					continue
				}
				dueSince, q = now, quiet{}
			}
			q.sample(readUint64("/gc/heap/allocs:bytes"))
			if q.still() || now.Sub(dueSince) >= trimMaxWait {
				trim(log, due)
				if due != "settling" {
					settling = settleTrims
				}
				due = ""
				timer.Reset(m.Trim)
				continue
			}
			timer.Reset(quietSample)
		}
	}
}

// quiet keeps the allocation counter of the last quietWindow, one sample
// every quietSample.
type quiet struct {
	samples [quietWindow/quietSample + 1]uint64
	n       int // samples taken
}

func (q *quiet) sample(v uint64) {
	q.samples[q.n%len(q.samples)] = v
	q.n++
}

// still reports whether less than quietAlloc was allocated over the
// window: false until the window is full.
func (q *quiet) still() bool {
	if q.n < len(q.samples) {
		return false
	}
	newest := q.samples[(q.n-1)%len(q.samples)]
	oldest := q.samples[q.n%len(q.samples)]
	return newest-oldest < quietAlloc
}

// trim collects and returns every free page to the system.
func trim(log *slog.Logger, why string) {
	before := readUint64(released)
	debug.FreeOSMemory()
	log.Debug("memory trimmed", "after", why, "returned", max(readUint64(released), before)-before)
}

// released is the runtime metric of the heap memory returned to the system.
const released = "/memory/classes/heap/released:bytes"

// heapFree is the heap memory that is free and not yet returned to the system.
func heapFree() uint64 { return readUint64("/memory/classes/heap/free:bytes") }

// readUint64 reads one of the runtime's uint64 metrics (runtime/metrics):
// 0 if the runtime has no such metric.
func readUint64(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
