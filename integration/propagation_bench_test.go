package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// measures numbers the propagation measures of a test binary.
var measures atomic.Int64

// memorySettle is how long the benchmarks wait after their last edit before
// they read the processes' memory: each service returns its free heap pages
// once it has been quiet for half a second (service.Memory).
const memorySettle = 2 * time.Second

// propagationEdits is how many route edits each propagation measure makes:
// enough that the 99th percentile (nearest rank) is not the slowest edit
// alone, as it was of 60 edits.
const propagationEdits = 120

// benchSizes are the route counts of BenchmarkPropagation: BENCH_SIZES,
// comma-separated, or 300, 1,000, 3,000 and 10,000.
func benchSizes(b *testing.B) []int {
	spec := os.Getenv("BENCH_SIZES")
	if spec == "" {
		spec = "300,1000,3000,10000"
	}
	var sizes []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("BENCH_SIZES=%q: %q is not a number of routes", spec, f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// BenchmarkPropagation runs gatewire on one Gateway and N tenant routes
// (gatewaytest's, each in its own file, with their backends in another)
// as a new user would: the four services as processes on a nats-server
// ("services"), and gatewire standalone. An ADS recorder (go-control-plane's
// client) is the gateway's Envoy, connected before gatewire starts. For
// each N of BENCH_SIZES it reports, and prints as a table with the load
// average beside each figure:
//   - cold-s, cold-cpu-s: from starting the processes to the recorder
//     holding the complete configuration, in wall time and in the CPU
//     time of gatewire's processes (nats-server's included);
//   - snapshots: the route configurations the recorder was sent until the
//     complete one, that one included (1 is a complete first config);
//   - edit-p50/p90/p99-ms: over 120 edits of one route's file, from the
//     write to the arrival of the route configuration that holds it;
//     write-max-ms, the longest of those writes (the file system's part);
//   - <process>-rss-MiB, <process>-hwm-MiB: resident memory memorySettle
//     after the last edit and its peak, per process, and rss-MiB their sum; <process>-anon-MiB:
//     RssAnon, the resident memory that is not the binary's own pages
//     (which the system shares and may drop);
//
// BENCH_STAGES=1 also prints how long each stage of an edit's propagation
// took, from the spans the processes export (see stages).
//
// BENCH_PROFILE=<folder> saves, per process (nats-server's included), a
// CPU profile of the first BENCH_PROFILE_SECONDS (default 10) of the cold
// start from the processes' readiness (or of the edits, with
// BENCH_PROFILE_PHASE=edits) and a heap profile at the end. Only then do
// the processes serve /debug/pprof: otherwise they run with the default
// settings, which the memory figures are of.
func BenchmarkPropagation(b *testing.B) {
	for _, n := range benchSizes(b) {
		dir := b.TempDir()
		tenantFolder(b, dir, n)
		for _, mode := range []string{"services", "standalone"} {
			b.Run(fmt.Sprintf("%s/routes=%d", mode, n), func(b *testing.B) {
				for b.Loop() {
					propagation(b, mode, dir, n)
				}
			})
		}
	}
}

// figures are what one propagation measure found, with the load average
// at each.
type figures struct {
	cold, coldCPU, coldLoad float64
	snapshots, firstVhosts  int
	p50, p90, p99, editLoad float64
	first, slowest          float64 // the first edit after the load, and the slowest
	slowestWrite            float64 // the longest write of an edited file: the file system's part of an edit
	rss, hwm, cpu           map[string]float64
	anon                    map[string]float64 // RssAnon: VmRSS without the pages of the binary
	endLoad                 float64
	procs                   []string
}

func propagation(b *testing.B, mode, dir string, n int) {
	var st *stages
	if os.Getenv("BENCH_STAGES") != "" {
		st = newStages(b)
	}
	var in *installation
	if mode == "services" {
		in = startServicesWith(b, dir, st.env())
	} else {
		in = startStandalone(b, dir, st.env()...)
	}
	profiles, phase := os.Getenv("BENCH_PROFILE"), os.Getenv("BENCH_PROFILE_PHASE")
	if phase == "" {
		phase = "cold"
	}
	var wg sync.WaitGroup
	cpuProfile := func() {
		seconds := os.Getenv("BENCH_PROFILE_SECONDS")
		if seconds == "" {
			seconds = "10"
		}
		for name, admin := range in.admins {
			wg.Add(1)
			go func() {
				defer wg.Done()
				saveProfile(b, admin, "/debug/pprof/profile?seconds="+seconds, filepath.Join(profiles, fmt.Sprintf("%s-%d-%s-%s.cpu", mode, n, name, phase)), 5*time.Minute)
			}()
		}
	}
	if profiles != "" && phase == "cold" {
		cpuProfile()
	}
	var f figures
	r := in.recorder
	timeout := 3*time.Minute + time.Duration(n)*60*time.Millisecond
	served := r.waitFor(b, timeout, fmt.Sprintf("the configuration of %d routes", n), resource.RouteType, func() bool { return r.complete(n) })
	f.cold, f.coldLoad = served.Sub(in.began).Seconds(), testkit.LoadAverage(b)
	for _, p := range in.procs {
		f.coldCPU += cpuSeconds(b, p)
	}
	routes := r.seen(resource.RouteType)
	f.snapshots, f.firstVhosts = len(routes), routes[0].vhosts
	wg.Wait()
	if profiles != "" && phase == "edits" {
		cpuProfile()
	}

	// The folder is shared by the measures of a size (-count, both
	// modes): each measure's edits carry its own number, or they would be
	// found in the routes the last one left.
	measure := measures.Add(1)
	edits := make([]float64, 0, propagationEdits)
	for k := range propagationEdits {
		i := (k*37 + 11) % n
		value := fmt.Sprintf("%s-%d-edit-%d", mode, measure, k)
		wrote := time.Now()
		write(b, filepath.Join(dir, "routes", fmt.Sprintf("r%d.yaml", i)), editedRoute(i, value))
		f.slowestWrite = max(f.slowestWrite, float64(time.Since(wrote).Microseconds())/1000)
		seen := r.waitFor(b, time.Minute, "edit "+value, resource.RouteType, func() bool { return r.routesContain([]byte(value)) })
		edits = append(edits, float64(seen.Sub(wrote).Microseconds())/1000)
		st.add(wrote, seen)
	}
	wg.Wait()
	f.editLoad = testkit.LoadAverage(b)
	f.first, f.slowest = edits[0], slices.Max(edits)
	slices.Sort(edits)
	f.p50, f.p90, f.p99 = percentile(edits, 50), percentile(edits, 90), percentile(edits, 99)

	time.Sleep(memorySettle)
	f.rss, f.hwm, f.anon, f.cpu = map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, p := range in.procs {
		f.procs = append(f.procs, p.name)
		f.rss[p.name], f.hwm[p.name], f.cpu[p.name] = statusMiB(b, p, "VmRSS"), statusMiB(b, p, "VmHWM"), cpuSeconds(b, p)
		f.anon[p.name] = statusMiB(b, p, "RssAnon")
	}
	f.endLoad = testkit.LoadAverage(b)
	if profiles != "" {
		for name, admin := range in.admins {
			saveProfile(b, admin, "/debug/pprof/heap?gc=1", filepath.Join(profiles, fmt.Sprintf("%s-%d-%s.heap", mode, n, name)), time.Minute)
		}
	}
	f.report(b, mode, n)
	st.report(b, mode, n)
}

// percentile is the p-th percentile of sorted, nearest rank.
func percentile(sorted []float64, p int) float64 {
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// report prints f as a table and reports it as metrics for benchstat.
func (f figures) report(b *testing.B, mode string, n int) {
	b.ReportMetric(f.cold, "cold-s")
	b.ReportMetric(f.coldCPU, "cold-cpu-s")
	b.ReportMetric(float64(f.snapshots), "snapshots")
	b.ReportMetric(f.p50, "edit-p50-ms")
	b.ReportMetric(f.p90, "edit-p90-ms")
	b.ReportMetric(f.p99, "edit-p99-ms")
	b.ReportMetric(f.slowestWrite, "write-max-ms")
	total := 0.0
	for _, name := range f.procs {
		b.ReportMetric(f.rss[name], name+"-rss-MiB")
		b.ReportMetric(f.hwm[name], name+"-hwm-MiB")
		b.ReportMetric(f.anon[name], name+"-anon-MiB")
		total += f.rss[name]
	}
	b.ReportMetric(total, "rss-MiB")
	var t strings.Builder
	fmt.Fprintf(&t, "\n%s, %d routes\n", mode, n)
	fmt.Fprintf(&t, "  %-34s %-28s load %.2f\n", "cold start to the complete config", fmt.Sprintf("%.2f s wall, %.2f s CPU", f.cold, f.coldCPU), f.coldLoad)
	fmt.Fprintf(&t, "  %-34s %-28s load %.2f\n", "route configurations until then", fmt.Sprintf("%d (the first of %d vhosts)", f.snapshots, f.firstVhosts), f.coldLoad)
	fmt.Fprintf(&t, "  %-34s %-28s load %.2f\n", "one route edit, p50 / p90 / p99", fmt.Sprintf("%.1f / %.1f / %.1f ms", f.p50, f.p90, f.p99), f.editLoad)
	fmt.Fprintf(&t, "  %-34s %-28s load %.2f\n", "the first edit, the slowest", fmt.Sprintf("%.1f / %.1f ms", f.first, f.slowest), f.editLoad)
	fmt.Fprintf(&t, "  %-34s %-28s load %.2f\n", "the slowest write of a route file", fmt.Sprintf("%.1f ms", f.slowestWrite), f.editLoad)
	for _, name := range f.procs {
		fmt.Fprintf(&t, "  %-34s %-28s load %.2f\n", name+": VmRSS / VmHWM / RssAnon, CPU",
			fmt.Sprintf("%.0f / %.0f / %.0f MiB, %.2f s", f.rss[name], f.hwm[name], f.anon[name], f.cpu[name]), f.endLoad)
	}
	fmt.Fprintf(&t, "  %-34s %-28s load %.2f\n", "VmRSS of all processes", fmt.Sprintf("%.0f MiB", total), f.endLoad)
	printTable(t.String())
}

// printTable prints a table of figures on the standard output: b.Log
// would keep only its first ten lines.
func printTable(table string) {
	fmt.Print(table)
}
