package xds

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// Environment of the fan-out benchmark.
const (
	// fanoutClientEnv runs this test binary as the benchmark's client:
	// "<addresses>;<streams>;<cds>,<eds>,<lds>,<rds>" (the versions it
	// waits for first).
	fanoutClientEnv = "GATEWIRE_XDS_BENCH_CLIENT"
	// fanoutStreamsEnv lists the stream counts to run, comma-separated.
	fanoutStreamsEnv = "GATEWIRE_XDS_BENCH_STREAMS"
	// fanoutBinaryEnv names an xds binary to measure instead of building
	// this one; with fanoutInlineEnv=1 the snapshot is written as one
	// inline value, the layout of earlier versions.
	fanoutBinaryEnv = "GATEWIRE_XDS_BENCH_BINARY"
	fanoutInlineEnv = "GATEWIRE_XDS_BENCH_INLINE"
	// fanoutProfileEnv names a folder for the servers' heap profiles.
	fanoutProfileEnv = "GATEWIRE_XDS_BENCH_PROFILES"
)

const (
	fanoutRoutes  = 1000
	fanoutPerConn = 10
	fanoutGateway = "bench/eg"
)

// BenchmarkFanOut measures one route edit reaching a fleet: xds
// processes (the real binary) serve one gateway of 1,000 routes to N
// Envoy-like ADS streams, 10 per gRPC connection, held by a client in
// another process; the edit is published and the time until each stream
// has it is measured. It reports the arrival p50, p99 and max, the
// servers' resident memory and live heap before and after the streams
// connected, per stream, the servers' and the client's CPU time during
// the edit, and the load average, for one and for two replicas sharing
// the streams, and prints a table.
func BenchmarkFanOut(b *testing.B) {
	counts := []int{1000, 5000}
	if v := os.Getenv(fanoutStreamsEnv); v != "" {
		counts = nil
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("%s: %q is not a stream count", fanoutStreamsEnv, f)
			}
			counts = append(counts, n)
		}
	}
	binary := fanoutBinary(b)
	var rows []fanoutRow
	for _, replicas := range []int{1, 2} {
		for _, n := range counts {
			b.Run(fmt.Sprintf("replicas=%d/streams=%d", replicas, n), func(b *testing.B) {
				for b.Loop() {
					r := runFanOut(b, binary, replicas, n)
					rows = append(rows, r)
					r.report(b)
				}
			})
		}
	}
	printFanOut(rows)
}

// fanoutBinary builds the xds binary, or takes the one named in the
// environment.
func fanoutBinary(b *testing.B) string {
	if p := os.Getenv(fanoutBinaryEnv); p != "" {
		return p
	}
	out := filepath.Join(b.TempDir(), "xds")
	cmd := exec.Command("go", "build", "-tags", "grpcnotrace", "-o", out, "./cmd/xds")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/xds: %v\n%s", err, msg)
	}
	return out
}

// fanoutRow is one case's figures.
type fanoutRow struct {
	replicas, streams           int
	p50, p99, max               time.Duration
	rssBefore, rssAfter         int64 // bytes, all replicas
	heapBefore, heapAfter       int64
	serverCPU, clientCPU        time.Duration
	shutdown                    time.Duration
	metrics                     time.Duration // how long /metrics took to answer during the edit
	load                        string
	firstAll                    time.Duration // from the client start to every stream holding the gateway
	rssPerStream, heapPerStream int64
}

func (r fanoutRow) report(b *testing.B) {
	b.ReportMetric(float64(r.p50)/1e6, "p50-ms")
	b.ReportMetric(float64(r.p99)/1e6, "p99-ms")
	b.ReportMetric(float64(r.max)/1e6, "max-ms")
	b.ReportMetric(float64(r.rssAfter)/(1<<20), "rss-MiB")
	b.ReportMetric(float64(r.heapPerStream)/1024, "heap-KiB/stream")
	b.ReportMetric(r.serverCPU.Seconds(), "server-cpu-s")
	b.ReportMetric(r.clientCPU.Seconds(), "client-cpu-s")
}

func printFanOut(rows []fanoutRow) {
	fmt.Printf("\nfan-out of one route edit, gateway of %d routes, %d streams per connection\n", fanoutRoutes, fanoutPerConn)
	fmt.Printf("%-8s %-7s %9s %9s %9s %13s %13s %13s %11s %11s %9s %11s %9s %s\n", "replicas", "streams", "p50", "p99", "max",
		"rss MiB", "heap MiB", "heap/stream", "server cpu", "client cpu", "shutdown", "initial", "/metrics", "loadavg")
	for _, r := range rows {
		fmt.Printf("%-8d %-7d %9s %9s %9s %6.0f→%-6.0f %6.1f→%-6.1f %10.1fKiB %11s %11s %9s %11s %9s %s\n",
			r.replicas, r.streams, ms(r.p50), ms(r.p99), ms(r.max),
			mib(r.rssBefore), mib(r.rssAfter), mib(r.heapBefore), mib(r.heapAfter), float64(r.heapPerStream)/1024,
			ms(r.serverCPU), ms(r.clientCPU), ms(r.shutdown), ms(r.firstAll), ms(r.metrics), r.load)
	}
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }
func mib(n int64) float64       { return float64(n) / (1 << 20) }

// runFanOut runs one case on a new NATS server and new xds processes.
func runFanOut(b *testing.B, binary string, replicas, n int) fanoutRow {
	srv := bustest.Server(b)
	bb := bustest.Open(b, bustest.Connect(b, srv))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v1 := xdstest.WithTypeVersions(xdstest.ManyRoutes(fanoutGateway, "v1", fanoutRoutes, -1, ""))
	pub := xdstest.NewPublisher(bb)
	publishFanOut(ctx, b, bb, pub, v1)

	var servers []*xdsProcess
	for i := range replicas {
		servers = append(servers, startXDSProcess(b, binary, srv.ClientURL(), bb.System(), i))
	}
	row := fanoutRow{replicas: replicas, streams: n}
	for _, s := range servers {
		s.waitReady(b)
		row.rssBefore += s.rss(b)
		row.heapBefore += s.heap(b, "before")
	}
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, s.xdsAddr)
	}
	start := time.Now()
	client := startFanOutClient(b, addrs, n, v1)
	client.expect(b, "ready")
	row.firstAll = time.Since(start)
	time.Sleep(time.Second) // let the servers' collector see the load go
	for _, s := range servers {
		row.rssAfter += s.rss(b)
		row.heapAfter += s.heap(b, fmt.Sprintf("after-%d", n))
	}
	row.rssPerStream = (row.rssAfter - row.rssBefore) / int64(n)
	row.heapPerStream = (row.heapAfter - row.heapBefore) / int64(n)

	v2 := xdstest.WithTypeVersions(xdstest.ManyRoutes(fanoutGateway, "v2", fanoutRoutes, 500, "edited"))
	cpuBefore := serversCPU(b, servers)
	t0 := time.Now()
	publishFanOut(ctx, b, bb, pub, v2)
	client.send(b, "wait "+versionOf(v2, typeRoute))
	row.metrics = servers[0].scrape(b)
	arrivals := client.arrivals(b)
	row.serverCPU = serversCPU(b, servers) - cpuBefore
	row.clientCPU = client.cpu(b)
	lat := make([]time.Duration, len(arrivals))
	for i, at := range arrivals {
		lat[i] = time.Duration(at - t0.UnixNano())
	}
	slices.Sort(lat)
	row.p50, row.p99, row.max = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	row.load = loadavg()
	client.stop(b)
	for _, s := range servers {
		row.shutdown = max(row.shutdown, s.stop(b))
	}
	return row
}

func publishFanOut(ctx context.Context, b *testing.B, bb *bus.Bus, pub *xdstest.Publisher, x *busv1.XdsSnapshot) {
	if os.Getenv(fanoutInlineEnv) == "1" {
		if _, err := bb.Put(ctx, bus.XDS, bus.GatewayKey("bench", "eg"), x); err != nil {
			b.Fatal(err)
		}
		return
	}
	if _, err := pub.Publish(ctx, x); err != nil {
		b.Fatal(err)
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

// xdsProcess is one xds service process.
type xdsProcess struct {
	cmd                *exec.Cmd
	xdsAddr, adminAddr string
}

func freePort(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func startXDSProcess(b *testing.B, binary, natsURL, system string, i int) *xdsProcess {
	p := &xdsProcess{xdsAddr: freePort(b), adminAddr: freePort(b)}
	p.cmd = exec.Command(binary)
	p.cmd.Env = append(os.Environ(), "GATEWIRE_NATS_URL="+natsURL, "GATEWIRE_SYSTEM="+system, "GATEWIRE_XDS_ADDRESS="+p.xdsAddr,
		"GATEWIRE_ADMIN_ADDRESS="+p.adminAddr, fmt.Sprintf("GATEWIRE_XDS_REPLICA_ID=bench-%d", i),
		"GATEWIRE_XDS_INSECURE=true", // the benchmark's clients connect in plaintext
		"GATEWIRE_ADMIN_PPROF=true",  // for the profiles of GATEWIRE_XDS_BENCH_PROFILES
		"GATEWIRE_LOG_LEVEL="+cmp.Or(os.Getenv("GATEWIRE_XDS_BENCH_LOG_LEVEL"), "warn"))
	p.cmd.Stderr, p.cmd.Stdout = os.Stderr, io.Discard
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	return p
}

func (p *xdsProcess) waitReady(b *testing.B) {
	testkit.Eventually(b, time.Minute, "the xds process ready", func() bool {
		resp, err := http.Get("http://" + p.adminAddr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// scrape reads /metrics and returns how long it took; it fails after 10 s,
// Prometheus's default scrape timeout. (With 5 s it failed once, at 2
// replicas and 5,000 streams on a machine at load 3.5, where the scrapes
// took 4.4 to 5 s while the edit reached every stream.)
func (p *xdsProcess) scrape(b *testing.B) time.Duration {
	start := time.Now()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + p.adminAddr + "/metrics")
	if err != nil {
		b.Errorf("/metrics during the edit: %v", err)
		return time.Since(start)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start)
}

// rss is the process's resident memory, in bytes.
func (p *xdsProcess) rss(b *testing.B) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// heap is the process's live heap after a collection (HeapAlloc, from
// its heap profile's memory statistics); the profile it saves under name in the profile folder when one is
// set.
func (p *xdsProcess) heap(b *testing.B, name string) int64 {
	resp, err := http.Get("http://" + p.adminAddr + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var n int64 = -1
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = "); ok {
			n, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if n < 0 {
		b.Fatal("the heap profile has no HeapAlloc")
	}
	if dir := os.Getenv(fanoutProfileEnv); dir != "" {
		saveProfile(b, "http://"+p.adminAddr+"/debug/pprof/heap", filepath.Join(dir, fmt.Sprintf("heap-%s-%d.pb.gz", name, p.cmd.Process.Pid)))
	}
	return n
}

func saveProfile(b *testing.B, url, path string) {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		b.Fatal(err)
	}
}

// cpu is the process's CPU time so far.
func (p *xdsProcess) cpu(b *testing.B) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100) // clock ticks of 10 ms
}

func serversCPU(b *testing.B, servers []*xdsProcess) time.Duration {
	var total time.Duration
	for _, s := range servers {
		total += s.cpu(b)
	}
	return total
}

// stop sends SIGTERM and returns how long the process took to end.
func (p *xdsProcess) stop(b *testing.B) time.Duration {
	start := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(30 * time.Second):
		b.Errorf("the xds process did not end within 30s of SIGTERM")
		_ = p.cmd.Process.Kill()
		return time.Since(start)
	}
}
