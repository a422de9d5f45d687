package translator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/shard"
)

// The size of the scale-out benchmark: 100 gateways of 50 HTTPRoutes each
// (15,104 objects with their Services and EndpointSlices).
const (
	scaleGateways = 100
	scaleRoutes   = 50
)

// BenchmarkScaleOut runs real translator services over an embedded NATS
// server with 100 gateways of 50 routes, and reports:
//
//   - resync: the objects are in the resources bucket; from the start of
//     the replicas to the last gateway's final xDS snapshot on the bus;
//   - load: the replicas are running; from the first object put to the
//     last gateway's final xDS snapshot on the bus;
//   - failover: two replicas with everything translated; one is cut off
//     (as a crash) and every gateway it owned gets a route change; from
//     the crash to the last of those changes on the bus. It is bound by
//     GATEWIRE_TRANSLATOR_MEMBER_TTL (3s).
//
// gateways/s is the translation throughput: gateways over resync or load
// time; max-share is the most gateways one replica translated. Each
// iteration takes seconds: run it with -benchtime 1x.
func BenchmarkScaleOut(b *testing.B) {
	rs := fleet(b, scaleGateways, scaleRoutes)
	want := finalDigests(b, rs)
	srv := bustest.Server(b)
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("resync/replicas=%d", n), func(b *testing.B) {
			measure(b, "resync", func() (time.Duration, int) { return resync(b, srv, rs, want, n) })
		})
		b.Run(fmt.Sprintf("load/replicas=%d", n), func(b *testing.B) {
			measure(b, "load", func() (time.Duration, int) { return load(b, srv, rs, want, n) })
		})
	}
	b.Run("failover/replicas=2", func(b *testing.B) {
		measure(b, "failover", func() (time.Duration, int) { return failover(b, srv, rs) })
	})
}

// measure runs one timed phase per iteration and reports its mean in
// seconds, the gateways translated per second and the largest share of
// them one replica translated.
func measure(b *testing.B, name string, phase func() (time.Duration, int)) {
	var total time.Duration
	share := 0
	for range b.N {
		d, n := phase()
		total += d
		share = max(share, n)
	}
	secs := total.Seconds() / float64(b.N)
	b.ReportMetric(secs, name+"-s")
	if name != "failover" {
		b.ReportMetric(scaleGateways/secs, "gateways/s")
		b.ReportMetric(float64(share), "max-share")
	}
}

// maxShare is the most gateways one of rs translated since since.
func maxShare(rs []*replica, since time.Time) int {
	n := 0
	for _, r := range rs {
		n = max(n, len(r.translated(since)))
	}
	return n
}

// benchConfig is the default configuration with a short heartbeat: a lone
// replica waits one heartbeat for others before its first translation.
func benchConfig(id string) Config {
	cfg := DefaultConfig()
	cfg.Heartbeat = 100 * time.Millisecond
	cfg.ReplicaID = id
	return cfg
}

func resync(b *testing.B, srv *server.Server, rs []*busv1.Resource, want map[string]fingerprint, n int) (time.Duration, int) {
	b.StopTimer()
	c := clusterOn(b, srv)
	putParallel(b, c.shared, rs)
	w := watchDigests(b, c.shared)
	defer w.Stop()
	b.StartTimer()
	start := time.Now()
	replicas := startReplicas(b, c, n, benchConfig)
	done := w.wait(b, want)
	b.StopTimer()
	stopReplicas(replicas)
	c.drop(b)
	return done.Sub(start), maxShare(replicas, start)
}

func load(b *testing.B, srv *server.Server, rs []*busv1.Resource, want map[string]fingerprint, n int) (time.Duration, int) {
	b.StopTimer()
	c := clusterOn(b, srv)
	replicas := startReplicas(b, c, n, benchConfig)
	w := watchDigests(b, c.shared)
	defer w.Stop()
	b.StartTimer()
	start := time.Now()
	putParallel(b, c.shared, rs)
	done := w.wait(b, want)
	b.StopTimer()
	stopReplicas(replicas)
	c.drop(b)
	return done.Sub(start), maxShare(replicas, start)
}

func failover(b *testing.B, srv *server.Server, rs []*busv1.Resource) (time.Duration, int) {
	b.StopTimer()
	c := clusterOn(b, srv)
	putParallel(b, c.shared, rs)
	replicas := startReplicas(b, c, 2, func(id string) Config { cfg := DefaultConfig(); cfg.ReplicaID = id; return cfg })
	w := watchDigests(b, c.shared)
	defer w.Stop()
	w.wait(b, finalDigests(b, rs))
	// The gateways of the crashed replica each get a change.
	view := shard.NewView(replicas[0].members.Self(), replicas[1].members.Self())
	changed := append([]*busv1.Resource(nil), rs...)
	var routes []*busv1.Resource
	for g := range scaleGateways {
		if view.Owner(gatewayShardKey(fleetGatewayName(g))) == replicas[1].members.Self() {
			routes = append(routes, fleetRouteResource(b, g, 0, "/moved"))
		}
	}
	want := finalDigests(b, append(changed, routes...))
	b.StartTimer()
	start := time.Now()
	replicas[1].crash()
	putParallel(b, c.shared, routes)
	done := w.wait(b, want)
	b.StopTimer()
	stopReplicas(replicas)
	c.drop(b)
	return done.Sub(start), maxShare(replicas, start)
}

// clusterOn opens the buckets of a new system on srv.
func clusterOn(tb testing.TB, srv *server.Server) *natsCluster {
	b := bustest.Open(tb, bustest.Connect(tb, srv))
	return &natsCluster{srv: srv, system: b.System(), shared: b}
}

// drop deletes the buckets of the cluster's system, so that iterations do
// not pile data up on the server.
func (c *natsCluster) drop(tb testing.TB) {
	js, err := jetstream.New(c.shared.Conn())
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for _, b := range bus.Buckets {
		if err := js.DeleteKeyValue(ctx, c.shared.BucketName(b)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := js.DeleteObjectStore(ctx, c.system+"-objects"); err != nil {
		tb.Fatal(err)
	}
}

func startReplicas(tb testing.TB, c *natsCluster, n int, config func(id string) Config) []*replica {
	var out []*replica
	for i := range n {
		out = append(out, c.start(tb, config(fmt.Sprintf("bench-%d", i))))
	}
	return out
}

func stopReplicas(rs []*replica) {
	for _, r := range rs {
		r.stop()
	}
}

// putParallel puts rs with a few writers at once, in order within each.
func putParallel(tb testing.TB, b *bus.Bus, rs []*busv1.Resource) {
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < len(rs); i += writers {
				r := rs[i]
				if _, err := b.Put(context.Background(), bus.Resources, bus.ResourceKey(r.Kind, r.Namespace, r.Name), r); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
}

// finalDigests is the fingerprint of the xDS commit of every gateway of rs
// (later objects replace earlier ones), by xds key: what a translator writes
// under the gateway's key once every resource of its snapshot is written.
func finalDigests(tb testing.TB, rs []*busv1.Resource) map[string]fingerprint {
	idx := resources.NewIndex()
	for _, r := range rs {
		if _, err := idx.Apply(r); err != nil {
			tb.Fatal(err)
		}
	}
	out := map[string]fingerprint{}
	for _, gw := range idx.Gateways() {
		o := Translate(idx, gatewayclass.DefaultControllerName, gw)
		if o == nil || o.Build == nil {
			tb.Fatalf("gateway %s has no xDS snapshot", gw)
		}
		out[bus.GatewayKey(gw.Namespace, gw.Name)] = fingerprintOf(o.Build.Commit)
	}
	return out
}

// digests follows the fingerprints of the xDS snapshots on the bus.
type digests struct {
	w   *bus.Watcher
	got map[string]fingerprint
}

func watchDigests(tb testing.TB, b *bus.Bus) *digests {
	w, err := b.Watch(context.Background(), bus.XDS, ">", bus.HeadersOnly())
	if err != nil {
		tb.Fatal(err)
	}
	return &digests{w: w, got: map[string]fingerprint{}}
}

func (d *digests) Stop() { d.w.Stop() }

// wait follows the xds bucket until every key holds its digest in want,
// and returns when the last one arrived.
func (d *digests) wait(tb testing.TB, want map[string]fingerprint) time.Time {
	matched := 0
	for k, fp := range want {
		if d.got[k] == fp {
			matched++
		}
	}
	timeout := time.After(5 * time.Minute)
	for matched < len(want) {
		select {
		case e := <-d.w.Updates():
			if e == nil {
				continue
			}
			fp, ok := want[e.Key]
			before := ok && d.got[e.Key] == fp
			d.got[e.Key] = digestOf(e)
			switch after := ok && d.got[e.Key] == fp; {
			case after && !before:
				matched++
			case before && !after:
				matched--
			}
		case <-timeout:
			tb.Fatalf("%d of %d gateways published within 5 minutes", matched, len(want))
		}
	}
	return time.Now()
}
