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
// Limit sets the runtime's soft memory limit (as GOMEMLIMIT does) unless
// GOMEMLIMIT is set; in Kubernetes set it to about 90% of the container's
// memory limit.
type Memory struct {
	Limit    string        `envconfig:"MEMORY_LIMIT" desc:"soft memory limit of the Go runtime, such as 200MiB (GOMEMLIMIT wins when set); empty: none"`
	Trim     time.Duration `envconfig:"MEMORY_TRIM_INTERVAL" default:"10s" desc:"how often free heap pages are returned to the system (after the initial load, and then when at least GATEWIRE_MEMORY_TRIM_FREE are free); 0 turns trimming off"`
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
	trim(log, "initial load")
	minFree, _ := ParseBytes(m.TrimFree)
	t := time.NewTicker(m.Trim)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if heapFree() >= uint64(minFree) {
				trim(log, "interval")
			}
		}
	}
}

// trim collects and returns every free page to the system.
func trim(log *slog.Logger, why string) {
	before := heapFree()
	debug.FreeOSMemory()
	log.Debug("memory trimmed", "after", why, "returned", before)
}

// heapFree is the heap memory that is free and not yet returned to the system.
func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
