package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// renderWithMonitoring renders an overlay with the monitoring component.
func renderWithMonitoring(t *testing.T, overlay string) objects {
	t.Helper()
	dir := t.TempDir()
	rel := func(path string) string {
		r, err := filepath.Rel(dir, filepath.Join(k8sDir(t), path))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kustomization := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\ncomponents:\n  - %s\n",
		rel("overlays/"+overlay), rel("components/monitoring"))
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	return index(render(t, dir))
}

// TestMonitoringComponent renders each overlay with the monitoring
// component and checks that the monitors select what serves metrics,
// that the NATS exporter sidecar is restricted and reads the server's
// monitoring port, that every alert is complete, and that the dashboard
// is valid JSON with a query in every panel.
func TestMonitoringComponent(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			idx := renderWithMonitoring(t, overlay)
			checkServiceMonitor(t, idx)
			checkNATSExporter(t, idx)
			checkRules(t, idx)
			checkDashboard(t, idx)
		})
	}
	// Without the component, an overlay has none of it.
	for _, kind := range []string{"ServiceMonitor", "PodMonitor", "PrometheusRule"} {
		if names := index(renderOverlay(t, "production")).ofKind(kind); len(names) > 0 {
			t.Errorf("the production overlay alone has %s %v", kind, names)
		}
	}
}

func field(t *testing.T, u *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if !ok || err != nil {
		t.Fatalf("%s %s: no %s (%v)", u.GetKind(), u.GetName(), strings.Join(path, "."), err)
	}
	return v
}

// checkServiceMonitor checks that the ServiceMonitor selects the four
// services' Services, each with the port it scrapes.
func checkServiceMonitor(t *testing.T, idx objects) {
	sm := idx["ServiceMonitor/gatewire"]
	if sm == nil {
		t.Fatal("no ServiceMonitor gatewire")
	}
	exprs := field(t, sm, "spec", "selector", "matchExpressions").([]any)
	values := exprs[0].(map[string]any)["values"].([]any)
	port := field(t, sm, "spec", "endpoints").([]any)[0].(map[string]any)["port"]
	var selected []string
	for _, v := range values {
		name := v.(string)
		selected = append(selected, name)
		var svc corev1.Service
		idx.decode(t, "Service", name, &svc)
		if svc.Labels["app.kubernetes.io/name"] != name {
			t.Errorf("Service %s: label app.kubernetes.io/name %q, which the ServiceMonitor selects on", name, svc.Labels["app.kubernetes.io/name"])
		}
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == port }) {
			t.Errorf("Service %s has no port %v to scrape", name, port)
		}
	}
	slices.Sort(selected)
	if want := []string{"gatewire-infra", "gatewire-provider", "gatewire-translator", "gatewire-xds"}; !slices.Equal(selected, want) {
		t.Errorf("the ServiceMonitor selects %v, want %v", selected, want)
	}
}

// checkNATSExporter checks the exporter sidecar of the NATS pods and the
// PodMonitor that scrapes it.
func checkNATSExporter(t *testing.T, idx objects) {
	var sts appsv1.StatefulSet
	idx.decode(t, "StatefulSet", "nats", &sts)
	pm := idx["PodMonitor/nats"]
	if pm == nil {
		t.Fatal("no PodMonitor nats")
	}
	sel := labels.SelectorFromSet(labels.Set(toStrings(field(t, pm, "spec", "selector", "matchLabels").(map[string]any))))
	if !sel.Matches(labels.Set(sts.Spec.Template.Labels)) {
		t.Errorf("the PodMonitor's selector %s does not select the NATS pods %v", sel, sts.Spec.Template.Labels)
	}
	port := field(t, pm, "spec", "podMetricsEndpoints").([]any)[0].(map[string]any)["port"]
	var exporter, server *corev1.Container
	for i, c := range sts.Spec.Template.Spec.Containers {
		switch c.Name {
		case "metrics":
			exporter = &sts.Spec.Template.Spec.Containers[i]
		case "nats":
			server = &sts.Spec.Template.Spec.Containers[i]
		}
	}
	if exporter == nil || server == nil {
		t.Fatalf("the NATS pod has containers %v, want nats and metrics", sts.Spec.Template.Spec.Containers)
	}
	if !slices.ContainsFunc(exporter.Ports, func(p corev1.ContainerPort) bool { return p.Name == port }) {
		t.Errorf("the exporter has no port %v for the PodMonitor", port)
	}
	monitor := portNumber(server.Ports, "monitor")
	if want := fmt.Sprintf("http://localhost:%d", monitor); !slices.Contains(exporter.Args, want) {
		t.Errorf("the exporter reads %v, want the server's monitoring port %s", exporter.Args, want)
	}
	for _, flag := range []string{"-varz", "-jsz=streams", "-healthz"} {
		if !slices.Contains(exporter.Args, flag) {
			t.Errorf("the exporter lacks %s, which the rules and dashboard read", flag)
		}
	}
	sc := exporter.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil ||
		*sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("the exporter's securityContext %+v is not restricted", sc)
	}
	if exporter.Resources.Limits.Memory().IsZero() || exporter.Resources.Requests.Cpu().IsZero() || exporter.LivenessProbe == nil {
		t.Errorf("the exporter has no resources or no liveness probe")
	}
	if strings.HasSuffix(exporter.Image, ":latest") || !strings.Contains(exporter.Image, ":") {
		t.Errorf("the exporter's image %s is not pinned", exporter.Image)
	}
}

func portNumber(ports []corev1.ContainerPort, name string) int32 {
	for _, p := range ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func toStrings(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// checkRules checks that every alert has an expression, a severity, a
// summary and a description.
func checkRules(t *testing.T, idx objects) {
	pr := idx["PrometheusRule/gatewire"]
	if pr == nil {
		t.Fatal("no PrometheusRule gatewire")
	}
	n := 0
	for _, g := range field(t, pr, "spec", "groups").([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			rule := r.(map[string]any)
			n++
			name, _ := rule["alert"].(string)
			expr, _ := rule["expr"].(string)
			sev, _, _ := unstructured.NestedString(rule, "labels", "severity")
			summary, _, _ := unstructured.NestedString(rule, "annotations", "summary")
			desc, _, _ := unstructured.NestedString(rule, "annotations", "description")
			if name == "" || expr == "" || !slices.Contains([]string{"critical", "warning", "info"}, sev) || summary == "" || desc == "" {
				t.Errorf("rule %q: expr %q, severity %q, summary %q, description %q: want all", name, expr, sev, summary, desc)
			}
		}
	}
	if n < 8 {
		t.Errorf("%d alerts, want at least 8", n)
	}
}

// dashQuery is a target of a dashboard panel.
type dashQuery struct {
	Expr string `json:"expr"`
}

// checkDashboard checks the dashboard ConfigMap.
func checkDashboard(t *testing.T, idx objects) {
	var cm corev1.ConfigMap
	idx.decode(t, "ConfigMap", "gatewire-dashboard", &cm)
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("the dashboard ConfigMap's labels %v lack grafana_dashboard: \"1\"", cm.Labels)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Type    string      `json:"type"`
			Title   string      `json:"title"`
			Targets []dashQuery `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(cm.Data["gatewire.json"]), &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if dash.UID == "" || len(dash.Panels) < 10 {
		t.Errorf("dashboard uid %q with %d panels", dash.UID, len(dash.Panels))
	}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || slices.ContainsFunc(p.Targets, func(q dashQuery) bool { return q.Expr == "" }) {
			t.Errorf("panel %q has a target without a query", p.Title)
		}
	}
}
