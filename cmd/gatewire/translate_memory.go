package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"

	"github.com/gatewire/gatewire/pkg/service"
)

// memoryLimit is the -memory-limit flag of gatewire translate: the soft
// limit of the Go heap during the translation, as GOMEMLIMIT sets it.
//
// The translation's working set (the IR, the route units, the encoded xDS)
// is about the size of the index it reads, and the collector's default
// pacing lets the heap grow to twice the live data at each cycle: left to
// itself, the heap of a 10,000-route input peaks at about 380 MiB for
// about 200 MiB of live data. "auto", the default, sets the limit once
// the input is indexed to autoLimitFactor times the live heap then (at
// least minAutoLimit), so the peak stays near the working set for a few
// more collections; the limit grows with the input, so a larger one is
// not slowed down by a limit it cannot keep. GOMEMLIMIT, when set, wins.
type memoryLimit struct {
	auto  bool
	bytes int64 // a fixed limit when not auto; 0: none
}

const (
	autoLimitFactor = 2.5
	minAutoLimit    = 256 << 20
)

func (m *memoryLimit) String() string {
	switch {
	case m.auto:
		return "auto"
	case m.bytes == 0:
		return "off"
	}
	return fmt.Sprintf("%dMiB", m.bytes>>20)
}

func (m *memoryLimit) Set(s string) error {
	switch strings.TrimSpace(s) {
	case "auto":
		*m = memoryLimit{auto: true}
		return nil
	case "off", "":
		*m = memoryLimit{}
		return nil
	}
	n, err := service.ParseBytes(s)
	if err != nil {
		return fmt.Errorf("want auto, off or a size such as 300MiB")
	}
	*m = memoryLimit{bytes: n}
	return nil
}

// autoLimit is the limit "auto" sets for a live heap of live bytes.
func autoLimit(live uint64) int64 {
	return max(minAutoLimit, int64(float64(live)*autoLimitFactor))
}

// applyMemoryLimit sets the limit m names for the translation and returns
// what it set ("" when nothing) and a function that restores the limit
// before it. GOMEMLIMIT in the environment wins over the flag.
func applyMemoryLimit(m memoryLimit) (string, func()) {
	if os.Getenv("GOMEMLIMIT") != "" || (!m.auto && m.bytes == 0) {
		return "", func() {}
	}
	limit, why := m.bytes, "set by -memory-limit"
	if m.auto {
		live := liveHeap()
		limit = autoLimit(live)
		why = fmt.Sprintf("%g× the live heap of %d MiB, at least %d MiB", autoLimitFactor, live>>20, minAutoLimit>>20)
	}
	prev := debug.SetMemoryLimit(limit)
	return fmt.Sprintf("memory limit %d MiB (%s)", limit>>20, why), func() { debug.SetMemoryLimit(prev) }
}

// liveHeap is the live heap now: it collects first (about 0.1 CPU-seconds
// for the 120 MiB of a 10,000-route input), since the last collection may
// have run anywhere in the indexing, and a limit from a stale figure can
// be too low for the translation to keep.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
