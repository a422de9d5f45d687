package integration

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// idleSettle is how long the idle benchmark waits once every process is
// ready: past two of the services' memory trims (GATEWIRE_MEMORY_TRIM_INTERVAL,
// 10 s), as an installation that has been up a while.
const idleSettle = 25 * time.Second

// BenchmarkIdle measures the resident memory of gatewire at rest on the
// quickstart (examples/quickstart: one Gateway, one HTTPRoute, one Service),
// with an ADS client as the gateway's Envoy and the default settings: each process of the services
// on a real nats-server (the provider as provider-file, the binary for
// hosts) and gatewire standalone, idleSettle after they are ready. It
// reports each process's VmRSS and, of it, RssFile, the pages of its mapped
// binary, and prints them with the load average.
func BenchmarkIdle(b *testing.B) {
	dir, err := filepath.Abs("../examples/quickstart")
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"services", "standalone"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				var in *installation
				if mode == "services" {
					in = startServicesWith(b, dir, nil)
				} else {
					in = startStandalone(b, dir)
				}
				time.Sleep(idleSettle)
				var t strings.Builder
				fmt.Fprintf(&t, "\nidle %s, quickstart, %s after ready, load %.2f\n", mode, idleSettle, testkit.LoadAverage(b))
				for _, p := range in.procs {
					name := binaryOf(p.name, in.env[p.name])
					rss, file := statusMiB(b, p, "VmRSS"), statusMiB(b, p, "RssFile")
					b.ReportMetric(rss, name+"-rss-MiB")
					b.ReportMetric(file, name+"-file-MiB")
					fmt.Fprintf(&t, "  %-14s VmRSS %5.1f MiB, of which the binary (RssFile) %5.1f\n", name, rss, file)
				}
				printTable(t.String())
				for _, p := range in.procs {
					p.stop()
				}
			}
		})
	}
}
