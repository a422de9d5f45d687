package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/kubetest"
)

// pendingXDS are the metrics of the xds service the rules and the
// dashboard read that it does not export yet. Remove each from this list
// when it is exported.
var pendingXDS = map[string]bool{}

// natsExporterNames are the fixed names of the collectors of the
// prometheus-nats-exporter that the component turns on besides -varz:
// -healthz (collector/healthz.go: <system>_healthz_status) and -jsz
// (collector/jsz.go: jetstream_server_* and jetstream_stream_*). The -varz
// metrics are gnatsd_varz_<key> for each numeric top-level key of the
// server's /varz (collector/collector.go), checked against the server's
// own /varz.
var natsExporterNames = map[string]bool{
	"gnatsd_healthz_status":                true,
	"jetstream_server_jetstream_disabled":  true,
	"jetstream_server_total_streams":       true,
	"jetstream_server_total_consumers":     true,
	"jetstream_server_total_messages":      true,
	"jetstream_server_total_message_bytes": true,
	"jetstream_server_max_memory":          true,
	"jetstream_server_max_storage":         true,
	"jetstream_stream_total_messages":      true,
	"jetstream_stream_total_bytes":         true,
	"jetstream_stream_first_seq":           true,
	"jetstream_stream_last_seq":            true,
	"jetstream_stream_consumer_count":      true,
}

// TestMonitoringNamesExportedMetrics renders deploy/k8s/components/
// monitoring, collects the metrics its alert rules and dashboard queries
// name, runs the four services as processes (the provider in kubernetes
// mode against a real API server, so that it writes status) on a real
// nats-server with a gateway, an ACKing and a NACKing xDS client, scrapes
// their /metrics, and checks that every metric named is exported; those
// of NATS against the exporter's names and the server's /varz.
func TestMonitoringNamesExportedMetrics(t *testing.T) {
	queries := monitoringQueries(t)
	named := metricNames(queries)
	if len(named) < 20 {
		t.Fatalf("only %d metrics named in %d queries: %v", len(named), len(queries), named)
	}
	var ours, nats []string
	for _, m := range named {
		switch {
		case m == "up": // Prometheus's own, for each target
		case strings.HasPrefix(m, "gnatsd_") || strings.HasPrefix(m, "jetstream_"):
			nats = append(nats, m)
		default:
			ours = append(ours, m)
		}
	}
	w := startMonitored(t)
	exported := w.scrapeUntil(t, ours)
	for _, m := range ours {
		switch {
		case pendingXDS[m]:
			t.Logf("%s: not exported yet; it comes with the xds service's rewrite", m)
		case !exported[m]:
			t.Errorf("%s is named by the monitoring component but no service exports it", m)
		}
	}
	varz := w.varzNames(t)
	for _, m := range nats {
		if !natsExporterNames[m] && !varz[m] {
			t.Errorf("%s is named by the monitoring component but the prometheus-nats-exporter does not export it", m)
		}
	}
	t.Logf("%d metrics named, %d of the services, %d of NATS: %s", len(named), len(ours), len(nats), strings.Join(named, " "))
}

// monitoringQueries renders the component over the production overlay and
// returns the expressions of its alert rules and dashboard.
func monitoringQueries(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	k8s, err := filepath.Abs(filepath.Join("..", "deploy", "k8s"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, _ := filepath.Rel(dir, filepath.Join(k8s, "overlays", "production"))
	component, _ := filepath.Rel(dir, filepath.Join(k8s, "components", "monitoring"))
	kz := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s]\ncomponents: [%s]\n", overlay, component)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kz), 0o600); err != nil {
		t.Fatal(err)
	}
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	var queries []string
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		switch r.GetKind() {
		case "PrometheusRule":
			groups, _, _ := unstructured.NestedSlice(m, "spec", "groups")
			for _, g := range groups {
				rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
				for _, rule := range rules {
					queries = append(queries, rule.(map[string]any)["expr"].(string))
				}
			}
		case "ConfigMap":
			if data, ok, _ := unstructured.NestedString(m, "data", "gatewire.json"); ok {
				queries = append(queries, dashboardQueries(t, data)...)
			}
		}
	}
	return queries
}

// dashboardQueries are the queries of a dashboard's panels and variables.
func dashboardQueries(t *testing.T, data string) []string {
	t.Helper()
	var dash struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct{ Definition string } `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal([]byte(data), &dash); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	for _, v := range dash.Templating.List {
		if m := labelValues.FindStringSubmatch(v.Definition); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promKeywords = map[string]bool{"or": true, "and": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true}
)

// metricNames are the metric names PromQL expressions select: what is
// left of them once strings, label matchers, ranges, grouping clauses,
// function names and operators are taken out.
func metricNames(exprs []string) []string {
	set := map[string]bool{}
	for _, e := range exprs {
		e = promStrings.ReplaceAllString(e, "")
		e = promMatchers.ReplaceAllString(e, " ")
		e = promGrouping.ReplaceAllString(e, " ")
		for _, m := range promIdent.FindAllStringSubmatch(e, -1) {
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[0]), "("))
			if m[1] != "" || promKeywords[strings.ToLower(name)] {
				continue // a function, or an operator
			}
			set[name] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// monitored is the installation the test scrapes.
type monitored struct {
	admins  map[string]string // service → admin address
	monitor string            // nats-server's monitoring address
}

// startMonitored starts an API server, nats-server and the four services,
// with a gateway of three endpoints, an xDS client that ACKs and one that
// NACKs.
func startMonitored(t *testing.T) *monitored {
	t.Helper()
	kube := kubetest.New(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kube.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	natsAddr, monitor := freeAddr(t), freeAddr(t)
	host, port, _ := strings.Cut(natsAddr, ":")
	_, mport, _ := strings.Cut(monitor, ":")
	nats := start(t, "nats-server", nil, "-a", host, "-p", port, "-m", mport, "-js", "-sd", filepath.Join(tmp, "nats"))
	waitListening(t, nats, natsAddr, 20*time.Second)

	w := &monitored{admins: map[string]string{}, monitor: monitor}
	xdsAddr := freeAddr(t)
	pki := newXDSPKI(t, tmp)
	common := []string{"GATEWIRE_NATS_URL=nats://" + natsAddr, "GATEWIRE_SYSTEM=mon"}
	env := map[string][]string{
		"provider":   {"GATEWIRE_PROVIDER_MODE=kubernetes", "GATEWIRE_PROVIDER_LEADER_ELECTION=false", "KUBECONFIG=" + kubeconfig},
		"translator": nil,
		"xds":        append(pki.xdsEnv(), "GATEWIRE_XDS_ADDRESS="+xdsAddr),
		"infra":      append(pki.infraEnv(), "GATEWIRE_INFRA_BOOTSTRAP_DIR="+filepath.Join(tmp, "bootstrap"), "GATEWIRE_INFRA_XDS_ADDRESS="+xdsAddr),
	}
	for _, name := range []string{"provider", "translator", "xds", "infra"} {
		w.admins[name] = freeAddr(t)
		p := start(t, name, append(append([]string{"GATEWIRE_ADMIN_ADDRESS=" + w.admins[name]}, common...), env[name]...))
		waitReady(t, p, w.admins[name], 60*time.Second)
	}
	// The Envoy connects first, so that its configuration is pushed to it
	// (gatewire_xds_push_seconds counts versions set after a stream opened).
	envoy := connectEnvoyWith(t, xdsAddr, "shop/edge", pki.creds(t, "shop/edge"))
	createObjects(t, kube, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n", gatewayYAML, backendYAML, routeYAML("/cart"))
	envoy.waitFor(t, 30*time.Second, "the route of shop/edge", func(s snapshot) bool {
		return routeTo(s, "shop.example.com", "/cart") != ""
	})
	nackClusters(t, xdsAddr, "shop/edge", pki.creds(t, "shop/edge"))
	return w
}

// createObjects creates the objects of YAML documents in the API server.
func createObjects(t *testing.T, kube *kubetest.Env, docs ...string) {
	t.Helper()
	c, err := client.New(kube.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		for _, part := range strings.Split(doc, "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(part), &u.Object); err != nil {
				t.Fatal(err)
			}
			if err := c.Create(context.Background(), u); err != nil {
				t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
}

// nackClusters connects a client of nodeCluster that rejects the clusters
// it is sent, once.
func nackClusters(t *testing.T, xdsAddr, nodeCluster string, creds credentials.TransportCredentials) {
	t.Helper()
	conn, err := grpc.NewClient(xdsAddr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(func() { cancel(); conn.Close() })
	c := sotw.NewADSClient(ctx, &core.Node{Id: "it-nack-" + nodeCluster, Cluster: nodeCluster}, resource.ClusterType)
	if err := c.InitConnect(conn); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(); err != nil {
		t.Fatal(err)
	}
	if err := c.Nack("rejected by the monitoring test"); err != nil {
		t.Fatal(err)
	}
}

// scrapeUntil scrapes every service until the metrics of want are all
// exported, or a minute has passed, and returns the names exported.
func (w *monitored) scrapeUntil(t *testing.T, want []string) map[string]bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		exported := map[string]bool{}
		for name, addr := range w.admins {
			for m := range scrape(t, name, "http://"+addr+"/metrics") {
				exported[m] = true
			}
		}
		if !slices.ContainsFunc(want, func(m string) bool { return !exported[m] && !pendingXDS[m] }) || time.Now().After(deadline) {
			return exported
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// scrape returns the names of the samples a /metrics page has.
func scrape(t *testing.T, service, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", service, err)
	}
	defer resp.Body.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

// varzNames are the names the exporter's -varz collector gives the
// numeric top-level fields of the server's /varz.
func (w *monitored) varzNames(t *testing.T) map[string]bool {
	t.Helper()
	resp, err := http.Get("http://" + w.monitor + "/varz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var varz map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&varz); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for k, v := range varz {
		if _, ok := v.(float64); ok {
			out["gnatsd_varz_"+k] = true
		}
	}
	return out
}

// TestMetricNames checks what metricNames takes from PromQL.
func TestMetricNames(t *testing.T) {
	got := metricNames([]string{
		`histogram_quantile(0.99, sum by (le, gateway) (rate(gatewire_translator_translation_duration_seconds_bucket{job="gatewire-translator", gateway=~"$gateway"}[5m]))) > 5`,
		`up{job="nats"} == 0 or gnatsd_healthz_status{job="nats"} != 0`,
		`absent(up{job="gatewire-xds"} == 1)`,
		`jetstream_server_total_message_bytes / on(server_id) jetstream_server_max_storage > 0.8`,
		`min_over_time(gatewire_translator_changes_pending[10m]) > 0`,
	})
	want := []string{"gatewire_translator_changes_pending", "gatewire_translator_translation_duration_seconds_bucket",
		"gnatsd_healthz_status", "jetstream_server_max_storage", "jetstream_server_total_message_bytes", "up"}
	if !slices.Equal(got, want) {
		t.Fatalf("metricNames = %v, want %v", got, want)
	}
}
