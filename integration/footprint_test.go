package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
)

// footprintRoutes is the size of the footprint benchmark's gateway.
const footprintRoutes = 1000

// BenchmarkStandaloneFootprint runs `gatewire standalone` (the four
// services and the embedded NATS server in one process) on one Gateway of
// 1,000 HTTPRoutes of the translation benchmark's shape, one file per
// route, with an ADS client as the gateway's Envoy. It reports:
//   - start-s: from the process's start to the client holding every route;
//   - change-ms: the median, over 20 edits, of the time from rewriting one
//     route's file to the client holding the edited route;
//   - rss-MiB and peak-MiB: the process's resident memory memorySettle
//     after the edits (VmRSS) and its peak since it started (VmHWM);
//   - live-MiB: its Go heap after a collection (the admin server's
//     /debug/pprof/heap?gc=1 collects; /metrics tells the heap).
func BenchmarkStandaloneFootprint(b *testing.B) {
	dir := b.TempDir()
	write(b, filepath.Join(dir, "gateway.yaml"), gatewaytest.GatewayClass()+gatewaytest.Gateway("bench", "eg"))
	for i := range footprintRoutes {
		write(b, filepath.Join(dir, "backends", fmt.Sprintf("b%d.yaml", i)), gatewaytest.TenantBackends("bench", i))
		write(b, filepath.Join(dir, "routes", fmt.Sprintf("r%d.yaml", i)), gatewaytest.TenantRoute("bench", "eg", i))
	}
	for b.Loop() {
		footprint(b, dir)
	}
}

// footprint is one measure of BenchmarkStandaloneFootprint over the input
// in dir.
func footprint(b *testing.B, dir string) {
	tmp := b.TempDir()
	xdsAddr, natsAddr, admin := freeAddr(b), freeAddr(b), freeAddr(b)
	began := time.Now()
	p := start(b, "gatewire", []string{
		"GATEWIRE_XDS_ADDRESS=" + xdsAddr,
		"GATEWIRE_INFRA_XDS_ADDRESS=" + xdsAddr,
		"GATEWIRE_STANDALONE_NATS_LISTEN=" + natsAddr,
		"GATEWIRE_STANDALONE_STORE_DIR=" + filepath.Join(tmp, "nats"),
		"GATEWIRE_STANDALONE_AUTH_DIR=" + filepath.Join(tmp, "auth"),
		"GATEWIRE_INFRA_BOOTSTRAP_DIR=" + filepath.Join(tmp, "bootstrap"),
		"GATEWIRE_ADMIN_ADDRESS=" + admin,
		"GATEWIRE_ADMIN_PPROF=true", // the live heap is read from /debug/pprof/heap
		"GATEWIRE_LOG_LEVEL=warn",
	}, "standalone", "-dir", dir)
	defer p.stop()
	waitReady(b, p, admin, 2*time.Minute)
	envoy := connectEnvoyWith(b, xdsAddr, "bench/eg", gatewayCreds(b, filepath.Join(tmp, "ca"), "bench/eg"))
	served := envoy.waitFor(b, 2*time.Minute, "every route", func(s snapshot) bool {
		return vhostCount(s) == footprintRoutes && len(s.endpoints) == 2*footprintRoutes
	})
	b.ReportMetric(served.Sub(began).Seconds(), "start-s")

	var changes []float64
	for k := range 20 {
		i := (k * 37) % footprintRoutes
		value := fmt.Sprintf("edit-%d", k)
		edited := strings.Replace(gatewaytest.TenantRoute("bench", "eg", i),
			fmt.Sprintf("value: route-%d}", i), "value: "+value+"}", 1)
		wrote := time.Now()
		write(b, filepath.Join(dir, "routes", fmt.Sprintf("r%d.yaml", i)), edited)
		seen := envoy.waitFor(b, 30*time.Second, "edit "+value, func(s snapshot) bool {
			return setsHeader(s, fmt.Sprintf("route-%d.example.com", i), value)
		})
		changes = append(changes, float64(seen.Sub(wrote).Microseconds())/1000)
		write(b, filepath.Join(dir, "routes", fmt.Sprintf("r%d.yaml", i)), gatewaytest.TenantRoute("bench", "eg", i))
		envoy.waitFor(b, 30*time.Second, "edit "+value+" undone", func(s snapshot) bool {
			return setsHeader(s, fmt.Sprintf("route-%d.example.com", i), fmt.Sprintf("route-%d", i))
		})
	}
	slices.Sort(changes)
	b.ReportMetric(changes[len(changes)/2], "change-ms")
	time.Sleep(memorySettle)
	b.ReportMetric(memoryMiB(b, p, "VmRSS"), "rss-MiB")
	b.ReportMetric(memoryMiB(b, p, "VmHWM"), "peak-MiB")
	b.ReportMetric(liveHeapMiB(b, admin), "live-MiB")
}

// vhostCount is the number of virtual hosts in every route configuration s
// holds.
func vhostCount(s snapshot) int {
	n := 0
	for _, rc := range s.routes {
		n += len(rc.GetVirtualHosts())
	}
	return n
}

// setsHeader reports whether every route of the virtual host for domain
// sets the request header x-route to value.
func setsHeader(s snapshot, domain, value string) bool {
	for _, rc := range s.routes {
		for _, vh := range rc.GetVirtualHosts() {
			if !slices.Contains(vh.GetDomains(), domain) || len(vh.GetRoutes()) == 0 {
				continue
			}
			for _, r := range vh.GetRoutes() {
				if !slices.ContainsFunc(r.GetRequestHeadersToAdd(), func(h *core.HeaderValueOption) bool {
					return h.GetHeader().GetKey() == "x-route" && h.GetHeader().GetValue() == value
				}) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// liveHeapMiB collects the process's garbage through its admin server, then
// reads go_memstats_heap_alloc_bytes from its metrics, in MiB.
func liveHeapMiB(b *testing.B, admin string) float64 {
	get := func(path string) string {
		resp, err := http.Get("http://" + admin + path)
		if err != nil {
			b.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %s %v", path, resp.Status, err)
		}
		return string(body)
	}
	get("/debug/pprof/heap?gc=1")
	for line := range strings.Lines(get("/metrics")) {
		if v, ok := strings.CutPrefix(line, "go_memstats_heap_alloc_bytes "); ok {
			bytes, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				b.Fatalf("metrics: %q: %v", line, err)
			}
			return bytes / (1 << 20)
		}
	}
	b.Fatal("metrics: no go_memstats_heap_alloc_bytes")
	return 0
}

// memoryMiB reads one of the process's memory figures from
// /proc/<pid>/status (field is VmRSS or VmHWM), in MiB.
func memoryMiB(b *testing.B, p *proc, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatalf("memory of %s: %v", p.name, err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kB, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				b.Fatalf("memory of %s: %q: %v", p.name, line, err)
			}
			return kB / 1024
		}
	}
	b.Fatalf("memory of %s: no %s in /proc status", p.name, field)
	return 0
}
