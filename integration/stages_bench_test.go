package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/telemetry/telemetrytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// stages splits the propagation of each edit of BenchmarkPropagation into
// the spans of its trace, when BENCH_STAGES is set: the processes export
// their spans to an OTLP receiver of the benchmark, and each edit is
// matched to the first publish of the provider that began after the file
// was written. All processes run on this machine, so their clocks agree.
// Exporting spans costs the processes a little CPU, so the edit
// percentiles of such a run are not the ones to quote.
type stages struct {
	receiver *telemetrytest.Receiver
	edits    []edit
}

// edit is when one edit was written and when its route configuration
// arrived at the recorder.
type edit struct{ wrote, seen time.Time }

// stageNames are the parts of one edit's propagation, in order.
var stageNames = []string{
	"write → provider publish",        // the provider notices the file, reads and validates it
	"provider publish",                // its puts to the resources bucket
	"publish end → translation",       // the translator's watch and queue (may start before the publish ends)
	"translation",                     // translate gateway: incremental translation and the writes of its outputs
	"translation end → xds push",      // the xds service's watch of the xds bucket
	"xds push",                        // building the snapshot and waking the streams
	"xds push end → arrival at Envoy", // encoding and sending the responses, and the client's decoding
}

func newStages(b *testing.B) *stages {
	return &stages{receiver: telemetrytest.NewHTTP(b)}
}

// env is what each gatewire process needs to export its spans to s.
func (s *stages) env() []string {
	if s == nil {
		return nil
	}
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + s.receiver.Endpoint(), "OTEL_BSP_SCHEDULE_DELAY=100"}
}

func (s *stages) add(wrote, seen time.Time) {
	if s != nil {
		s.edits = append(s.edits, edit{wrote, seen})
	}
}

// trace is the spans of one edit's propagation.
type trace struct{ publish, translate, push *telemetrytest.Span }

// durations are the stages of t and the arrival, in stageNames' order.
func (t trace) durations(e edit) []time.Duration {
	return []time.Duration{
		t.publish.Start.Sub(e.wrote), t.publish.End.Sub(t.publish.Start),
		t.translate.Start.Sub(t.publish.End), t.translate.End.Sub(t.translate.Start),
		t.push.Start.Sub(t.translate.End), t.push.End.Sub(t.push.Start),
		e.seen.Sub(t.push.End),
	}
}

// traces matches each edit to its spans; ok is false while one is missing.
func (s *stages) traces(spans []telemetrytest.Span) (out []trace, ok bool) {
	byTrace := map[string][]*telemetrytest.Span{}
	var publishes []*telemetrytest.Span
	for i := range spans {
		sp := &spans[i]
		byTrace[sp.TraceID] = append(byTrace[sp.TraceID], sp)
		if sp.Name == "provider.file.publish" {
			publishes = append(publishes, sp)
		}
	}
	slices.SortFunc(publishes, func(a, b *telemetrytest.Span) int { return a.Start.Compare(b.Start) })
	first := func(traceID, name string) *telemetrytest.Span {
		var found *telemetrytest.Span
		for _, sp := range byTrace[traceID] {
			if sp.Name == name && (found == nil || sp.Start.Before(found.Start)) {
				found = sp
			}
		}
		return found
	}
	for _, e := range s.edits {
		i, _ := slices.BinarySearchFunc(publishes, e.wrote, func(sp *telemetrytest.Span, t time.Time) int { return sp.Start.Compare(t) })
		if i == len(publishes) || publishes[i].Start.After(e.seen) {
			return nil, false
		}
		t := trace{publish: publishes[i]}
		t.translate, t.push = first(t.publish.TraceID, "translate gateway"), first(t.publish.TraceID, "xds push")
		if t.translate == nil || t.push == nil {
			return nil, false
		}
		out = append(out, t)
	}
	return out, true
}

// report waits for the spans of every edit and prints, per stage, its
// median and 90th percentile over the edits and what it took in the first
// edit.
func (s *stages) report(b *testing.B, mode string, n int) {
	if s == nil {
		return
	}
	traces := testkit.EventuallyValue(b, 30*time.Second, fmt.Sprintf("BENCH_STAGES: the spans of the %d edits", len(s.edits)), func() ([]trace, bool) {
		return s.traces(s.receiver.Spans())
	})
	per := make([][]float64, len(stageNames))
	var first []time.Duration
	for k, t := range traces {
		d := t.durations(s.edits[k])
		if k == 0 {
			first = d
		}
		for i := range d {
			per[i] = append(per[i], float64(d[i].Microseconds())/1000)
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n%s, %d routes: the stages of %d edits, p50 / p90 (the first edit), ms  load %.2f\n", mode, n, len(traces), testkit.LoadAverage(b))
	for i, name := range stageNames {
		slices.Sort(per[i])
		fmt.Fprintf(&out, "  %-34s %6.2f / %6.2f  (%6.2f)\n", name, percentile(per[i], 50), percentile(per[i], 90), float64(first[i].Microseconds())/1000)
	}
	printTable(out.String())
}
