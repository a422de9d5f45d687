package deploy

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// natsURL is where every service finds the bus: the client Service "nats",
// over TLS.
const natsURL = "tls://nats:4222"

// checkService checks the Deployment, Service and ServiceAccount of s.
func checkService(t *testing.T, idx objects, ws map[string]workload, s service, want shape) {
	t.Helper()
	name := "gatewire-" + s.name
	w, ok := ws[name]
	if !ok || w.kind != "Deployment" {
		t.Errorf("no Deployment %s", name)
		return
	}
	pod := w.pod.Spec
	if len(pod.Containers) != 1 || pod.Containers[0].Name != s.name {
		t.Fatalf("Deployment %s: want one container named %s", name, s.name)
	}
	c := pod.Containers[0]
	if img := "ghcr.io/gatewire/" + s.name + ":" + releaseTag(t); c.Image != img {
		t.Errorf("%s: image %s, want %s", name, c.Image, img)
	}
	env := map[string]string{
		"GATEWIRE_NATS_URL":       natsURL,
		"GATEWIRE_NATS_REPLICAS":  want.natsReplicas,
		"GATEWIRE_ADMIN_ADDRESS":  fmt.Sprintf(":%d", s.adminPort),
		"GATEWIRE_NATS_NKEY_SEED": "/etc/gatewire/nats-user/user.nk",
		"GATEWIRE_NATS_TLS_CA":    "/etc/gatewire/nats-tls/ca.crt",
	}
	for k, v := range s.env {
		env[k] = v
	}
	got := map[string]string{}
	for _, e := range c.Env {
		got[e.Name] = e.Value
	}
	for k, v := range env {
		if got[k] != v {
			t.Errorf("%s: %s=%q, want %q", name, k, got[k], v)
		}
	}
	checkProbe(t, name+" liveness", c.LivenessProbe, c, "/healthz", s.adminPort)
	checkProbe(t, name+" readiness", c.ReadinessProbe, c, "/readyz", s.adminPort)
	ports := map[string]int32{"metrics": s.adminPort}
	if s.name == "xds" {
		ports["grpc-xds"] = 18000
	}
	checkServicePorts(t, idx, name, w.pod, ports)
	checkServiceAccount(t, idx, s, pod)
}

func checkProbe(t *testing.T, what string, p *corev1.Probe, c corev1.Container, path string, port int32) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s: no HTTP probe", what)
		return
	}
	if p.HTTPGet.Path != path || containerPort(c, p.HTTPGet.Port) != port {
		t.Errorf("%s: probe %s on port %s, want %s on %d", what, p.HTTPGet.Path, p.HTTPGet.Port.String(), path, port)
	}
}

// containerPort resolves a port number or name of c; 0 if unknown.
func containerPort(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return 0
}

// checkServicePorts checks that the Service name selects pod and forwards
// each named port to that container port.
func checkServicePorts(t *testing.T, idx objects, name string, pod corev1.PodTemplateSpec, ports map[string]int32) {
	t.Helper()
	var svc corev1.Service
	idx.decode(t, "Service", name, &svc)
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("Service %s: selector %v does not select its pods", name, svc.Spec.Selector)
	}
	for portName, want := range ports {
		found := false
		for _, p := range svc.Spec.Ports {
			if p.Name != portName {
				continue
			}
			found = true
			if p.Port != want || containerPort(pod.Spec.Containers[0], p.TargetPort) != want {
				t.Errorf("Service %s: port %s is %d to %s, want %d", name, portName, p.Port, p.TargetPort.String(), want)
			}
		}
		if !found {
			t.Errorf("Service %s: no port %s", name, portName)
		}
	}
}

// checkServiceAccount checks that the pod runs as its own ServiceAccount,
// and that a service that does not talk to the API has no token and no role.
func checkServiceAccount(t *testing.T, idx objects, s service, pod corev1.PodSpec) {
	t.Helper()
	name := "gatewire-" + s.name
	if pod.ServiceAccountName != name {
		t.Errorf("Deployment %s: serviceAccountName %q, want %s", name, pod.ServiceAccountName, name)
	}
	var sa corev1.ServiceAccount
	idx.decode(t, "ServiceAccount", name, &sa)
	bound := boundServiceAccounts(t, idx)
	if s.kubeAPI {
		if !bound[name] {
			t.Errorf("ServiceAccount %s: no role is bound to it", name)
		}
		return
	}
	if bound[name] {
		t.Errorf("ServiceAccount %s: a role is bound to it, want none", name)
	}
	for what, p := range map[string]*bool{"ServiceAccount": sa.AutomountServiceAccountToken, "pod": pod.AutomountServiceAccountToken} {
		if p == nil || *p {
			t.Errorf("%s %s: automountServiceAccountToken is not false", what, name)
		}
	}
}

// boundServiceAccounts returns the ServiceAccounts of gatewire-system named
// by a RoleBinding or ClusterRoleBinding.
func boundServiceAccounts(t *testing.T, idx objects) map[string]bool {
	t.Helper()
	bound := map[string]bool{}
	for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
		for _, name := range idx.ofKind(kind) {
			var b rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
			idx.decode(t, kind, name, &b)
			for _, s := range b.Subjects {
				if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == systemNamespace {
					bound[s.Name] = true
				}
			}
		}
	}
	return bound
}

// checkNATS checks the NATS cluster: a StatefulSet with a volume per node,
// a headless Service for its routes, the client Service behind natsURL, and
// a nats-server configuration that nats-server itself accepts, with a route
// to each node.
func checkNATS(t *testing.T, idx objects, ws map[string]workload) {
	t.Helper()
	var sts appsv1.StatefulSet
	idx.decode(t, "StatefulSet", "nats", &sts)
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "data" {
		t.Errorf("StatefulSet nats: want one volumeClaimTemplate named data")
	}
	var headless corev1.Service
	idx.decode(t, "Service", sts.Spec.ServiceName, &headless)
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s: want headless and publishing not-ready pods", headless.Name)
	}
	u, err := url.Parse(strings.Replace(natsURL, "tls://", "nats://", 1))
	if err != nil {
		t.Fatal(err)
	}
	checkServicePorts(t, idx, u.Hostname(), ws["nats"].pod, map[string]int32{"client": 4222})
	checkServicePorts(t, idx, headless.Name, ws["nats"].pod, map[string]int32{"cluster": 6222})
	var box appsv1.Deployment
	idx.decode(t, "Deployment", "nats-box", &box)
	if env := box.Spec.Template.Spec.Containers[0].Env; len(env) == 0 || env[0].Name != "NATS_URL" || env[0].Value != natsURL {
		t.Errorf("nats-box: NATS_URL is not %s", natsURL)
	}
	opts := natsOptions(t, idx, sts)
	if !opts.JetStream || opts.StoreDir != "/data" {
		t.Errorf("nats.conf: jetstream %v in %q, want it on the volume /data", opts.JetStream, opts.StoreDir)
	}
	replicas := deref(sts.Spec.Replicas)
	if replicas == 1 {
		if opts.Cluster.Port != 0 || len(opts.Routes) != 0 {
			t.Errorf("nats.conf: one node with a cluster block")
		}
		return
	}
	if len(opts.Routes) != int(replicas) {
		t.Fatalf("nats.conf: %d routes for %d nodes", len(opts.Routes), replicas)
	}
	for i, r := range opts.Routes {
		if host := fmt.Sprintf("nats-%d.%s:6222", i, headless.Name); r.Host != host {
			t.Errorf("nats.conf: route %d is %s, want %s", i, r.Host, host)
		}
	}
}

// natsOptions parses the nats.conf of the ConfigMap the StatefulSet mounts,
// as nats-server would in the pod nats-0, with the Secrets of certgen
// mounted (see natsPod).
func natsOptions(t *testing.T, idx objects, sts appsv1.StatefulSet) *server.Options {
	t.Helper()
	opts, _ := natsPod(t, idx, sts)
	return opts
}

// natsPod writes the files of the pod nats-0 under a temporary folder: the
// nats.conf of the ConfigMap the StatefulSet mounts, and what certgen puts
// in the Secrets it mounts (a certificate of a new CA, the users of
// natsauth), at the paths of the mounts; it parses nats.conf as
// nats-server would there. The paths of nats.conf are rewritten into that
// folder.
func natsPod(t *testing.T, idx objects, sts appsv1.StatefulSet) (*server.Options, *natsFiles) {
	t.Helper()
	var cmName string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	var cm corev1.ConfigMap
	idx.decode(t, "ConfigMap", cmName, &cm)
	files := podFiles(t, sts.Spec.Template.Spec)
	file := filepath.Join(files.root, "etc", "nats", "nats.conf")
	conf := strings.ReplaceAll(cm.Data["nats.conf"], "/etc/", files.root+"/etc/")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SERVER_NAME", "nats-0")
	opts, err := server.ProcessConfigFile(file)
	if err != nil {
		t.Fatalf("ConfigMap %s: nats.conf: %v", cmName, err)
	}
	if opts.ServerName != "nats-0" {
		t.Errorf("nats.conf: server_name %q, want the pod name", opts.ServerName)
	}
	return opts, files
}
