package deploy

import (
	"bufio"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/natsauth"
	gwservice "github.com/gatewire/gatewire/pkg/service"
)

// natsFiles are the files of a NATS pod written by podFiles.
type natsFiles struct {
	root  string
	ca    *certs.CA
	seeds map[natsauth.Role]string
}

// podFiles writes, under a temporary root, what the Secrets mounted into
// the nats container hold once certgen has run: gatewire-nats-tls (a
// certificate for nats, localhost and the routes, of a new CA) and
// gatewire-nats-auth (the users of a new set of seeds).
func podFiles(t *testing.T, pod corev1.PodSpec) *natsFiles {
	t.Helper()
	f := &natsFiles{root: t.TempDir(), seeds: map[natsauth.Role]string{}}
	var err error
	if f.ca, err = certs.NewCA("deploy test CA", 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	users, err := natsauth.NewUsers()
	if err != nil {
		t.Fatal(err)
	}
	auth, err := natsauth.AuthConfig("gatewire", users)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		f.seeds[u.Role] = filepath.Join(f.root, string(u.Role)+".nk")
		writeFile(t, f.seeds[u.Role], u.Seed)
	}
	nats, err := f.ca.Issue(certs.ServiceRequest(certs.ServiceID{TrustDomain: certs.DefaultTrustDomain, Name: "nats"},
		certs.ServerAuth|certs.ClientAuth, []string{"nats", "localhost", "*.nats-headless"}, 0), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]map[string][]byte{
		"gatewire-nats-tls":  {"tls.crt": nats.Cert, "tls.key": nats.Key, "ca.crt": nats.CA},
		"gatewire-nats-auth": {"auth.conf": []byte(auth)},
	}
	mounts := map[string]string{}
	for _, m := range pod.Containers[0].VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, v := range pod.Volumes {
		if v.Secret == nil {
			continue
		}
		data, ok := secrets[v.Secret.SecretName]
		if !ok {
			t.Fatalf("the nats pod mounts Secret %s, which certgen does not write", v.Secret.SecretName)
		}
		for key, value := range data {
			writeFile(t, filepath.Join(f.root, mounts[v.Name], key), value)
		}
	}
	if err := os.MkdirAll(filepath.Join(f.root, "etc", "nats"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestNATSIsSecure runs nats-server on the nats.conf of each overlay, with
// the Secrets certgen writes, and checks that it serves TLS only, verifies
// the certificates of its routes, knows exactly a user per role, each with
// permissions, and lets in only those users.
func TestNATSIsSecure(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			idx := index(renderOverlay(t, overlay))
			var sts appsv1.StatefulSet
			idx.decode(t, "StatefulSet", "nats", &sts)
			opts, files := natsPod(t, idx, sts)
			if opts.TLSConfig == nil || opts.TLSConfig.MinVersion < tls.VersionTLS12 {
				t.Fatal("nats.conf: no TLS for clients")
			}
			if deref(sts.Spec.Replicas) > 1 && (opts.Cluster.TLSConfig == nil || opts.Cluster.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert) {
				t.Error("nats.conf: routes without TLS that verifies the other node")
			}
			var roles []string
			for _, u := range opts.Nkeys {
				if u.Permissions == nil || u.Permissions.Publish == nil || len(u.Permissions.Publish.Allow) == 0 {
					t.Errorf("user %s has no publish permissions: it may publish anything", u.Nkey)
				}
				if u.Account == nil || u.Account.Name != natsauth.Account {
					t.Errorf("user %s is not in the account %s", u.Nkey, natsauth.Account)
				}
				roles = append(roles, u.Nkey)
			}
			if len(roles) != len(natsauth.Roles) || len(opts.Users) != 0 || opts.Username != "" || opts.Authorization != "" || opts.NoAuthUser != "" {
				t.Errorf("nats.conf: %d nkey users, %d other users, no_auth_user %q: want a user per role and no other way in", len(roles), len(opts.Users), opts.NoAuthUser)
			}
			s := startNATS(t, opts)
			checkNATSClients(t, s, files)
		})
	}
}

// startNATS runs the server of opts on loopback, alone: without its
// cluster (checked above), whose JetStream would wait for its peers.
func startNATS(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.Host, opts.Port, opts.HTTPPort = "127.0.0.1", -1, 0
	opts.Cluster, opts.Routes = server.ClusterOpts{}, nil
	opts.StoreDir, opts.PidFile = t.TempDir(), ""
	opts.NoSigs, opts.NoLog = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// checkNATSClients connects as the reader, as a service would, and
// attempts the ways in that must be refused.
func checkNATSClients(t *testing.T, s *server.Server, files *natsFiles) {
	t.Helper()
	url := "tls://localhost:" + strings.TrimPrefix(s.Addr().String()[strings.LastIndex(s.Addr().String(), ":"):], ":")
	caFile := filepath.Join(files.root, "ca.crt")
	writeFile(t, caFile, files.ca.TrustBundle())
	base := gwservice.Base{NATSURL: url, System: "gatewire", NATSNkeySeed: files.seeds[natsauth.Reader], NATSTLSCA: caFile}
	opts, err := gwservice.NATSOptions(base, string(natsauth.Reader), discard())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("the reader, over TLS: %v", err)
	}
	nc.Close()
	for name, o := range map[string][]nats.Option{
		"no user":                         {nats.RootCAs(caFile)},
		"a user the server does not know": {nats.RootCAs(caFile), mustSeed(t, files.root)},
	} {
		if nc, err := nats.Connect(strings.Replace(url, "tls://", "nats://", 1), append(o, nats.MaxReconnects(0), nats.Timeout(5*time.Second))...); err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		} else {
			t.Logf("%s: refused: %v", name, err)
		}
	}
	// Plaintext: CONNECT without TLS gets no PONG.
	raw, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(raw)
	if info, _ := r.ReadString('\n'); !strings.Contains(info, `"tls_required":true`) {
		t.Errorf("the server does not require TLS: %s", info)
	}
	_, _ = raw.Write([]byte("CONNECT {\"verbose\":false}\r\nPING\r\n"))
	if answer, _ := r.ReadString('\n'); strings.HasPrefix(answer, "PONG") {
		t.Error("a plaintext client got PONG")
	}
}

func mustSeed(t *testing.T, dir string) nats.Option {
	t.Helper()
	u, err := natsauth.NewUser(natsauth.Reader)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "stranger.nk")
	writeFile(t, path, u.Seed)
	opt, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

// TestNetworkPolicies checks who the NetworkPolicies of each overlay let
// reach what: everything in gatewire-system is closed but for the ports
// below, each to its peers only.
func TestNetworkPolicies(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			idx := index(renderOverlay(t, overlay))
			pods := map[string]labels.Set{}
			for name, w := range workloads(t, idx) {
				pods[name] = w.pod.Labels
			}
			envoy := labels.Set{"app.kubernetes.io/name": "gatewire-envoy"}
			proxyless := labels.Set{"gateway.gatewire.dev/xds-client": "true"}
			prometheus := labels.Set{"app.kubernetes.io/name": "prometheus"}
			stranger := labels.Set{"app": "something-else"}
			policies := decodePolicies(t, idx)
			anyNS, scrape := labels.Set{"kubernetes.io/metadata.name": "shop"}, labels.Set{"gatewire.dev/scrape": "true"}
			services := []string{"gatewire-provider", "gatewire-translator", "gatewire-xds", "gatewire-infra"}
			cases := []policyCase{
				{"gatewire-xds", 18000,
					[]peer{{"an Envoy", envoy, anyNS}, {"a proxyless client", proxyless, anyNS}},
					[]peer{{"another pod", stranger, anyNS}, {"nats-box", pods["nats-box"], nil}, {"the provider", pods["gatewire-provider"], nil}}},
				{"nats", 4222,
					append(peersOf(pods, services...), peer{"nats-box", pods["nats-box"], nil}),
					[]peer{{"an Envoy", envoy, anyNS}, {"another pod of gatewire-system", stranger, nil}, {"Prometheus", prometheus, scrape}}},
				{"nats", 6222,
					[]peer{{"a NATS node", pods["nats"], nil}},
					peersOf(pods, services...)},
				{"nats", 8222,
					[]peer{{"Prometheus", prometheus, scrape}},
					[]peer{{"nats-box", pods["nats-box"], nil}, {"Prometheus of an unlabelled namespace", prometheus, anyNS}}},
			}
			for i, s := range services {
				cases = append(cases, policyCase{s, 19001 + int32(i), []peer{{"Prometheus", prometheus, scrape}},
					[]peer{{"an Envoy", envoy, anyNS}, {"nats-box", pods["nats-box"], nil}, {"another service", pods[services[(i+1)%len(services)]], nil}}})
			}
			for _, c := range cases {
				for _, p := range c.allowed {
					if !admits(policies, pods[c.to], c.port, p.labels, p.ns) {
						t.Errorf("%s:%d: %s is refused", c.to, c.port, p.name)
					}
				}
				for _, p := range c.refused {
					if admits(policies, pods[c.to], c.port, p.labels, p.ns) {
						t.Errorf("%s:%d: %s is admitted", c.to, c.port, p.name)
					}
				}
			}
			for name, w := range pods {
				if !isolated(policies, w) {
					t.Errorf("%s: no NetworkPolicy isolates its pods", name)
				}
			}
		})
	}
}

// peer is a pod that tries to connect: its labels and its namespace's
// (nil: gatewire-system).
type peer struct {
	name   string
	labels labels.Set
	ns     labels.Set
}

// policyCase is a port of a workload and who may and may not reach it.
type policyCase struct {
	to      string
	port    int32
	allowed []peer
	refused []peer
}

func peersOf(pods map[string]labels.Set, names ...string) []peer {
	var out []peer
	for _, n := range names {
		out = append(out, peer{n, pods[n], nil})
	}
	return out
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func decodePolicies(t *testing.T, idx objects) []networkingv1.NetworkPolicy {
	t.Helper()
	var out []networkingv1.NetworkPolicy
	for _, name := range idx.ofKind("NetworkPolicy") {
		var p networkingv1.NetworkPolicy
		idx.decode(t, "NetworkPolicy", name, &p)
		out = append(out, p)
	}
	if len(out) == 0 {
		t.Fatal("no NetworkPolicy")
	}
	return out
}

// isolated reports whether a policy with Ingress selects pod.
func isolated(policies []networkingv1.NetworkPolicy, pod labels.Set) bool {
	for _, p := range policies {
		if slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) && selects(&p.Spec.PodSelector, pod) {
			return true
		}
	}
	return false
}

// admits reports whether some policy lets a pod with labels from, in a
// namespace with fromNS (nil: gatewire-system), reach pod on port, as
// NetworkPolicy semantics say (the union of the rules of every policy that
// selects pod).
func admits(policies []networkingv1.NetworkPolicy, pod labels.Set, port int32, from, fromNS labels.Set) bool {
	sameNS := fromNS == nil
	if sameNS {
		fromNS = labels.Set{"kubernetes.io/metadata.name": systemNamespace}
	}
	for _, p := range policies {
		if !selects(&p.Spec.PodSelector, pod) {
			continue
		}
		for _, rule := range p.Spec.Ingress {
			if !portMatches(rule.Ports, port) {
				continue
			}
			for _, peer := range rule.From {
				nsOK := (peer.NamespaceSelector == nil && sameNS) || (peer.NamespaceSelector != nil && selects(peer.NamespaceSelector, fromNS))
				podOK := peer.PodSelector == nil || selects(peer.PodSelector, from)
				if peer.IPBlock == nil && nsOK && podOK {
					return true
				}
			}
		}
	}
	return false
}

func selects(s *metav1.LabelSelector, l labels.Set) bool {
	sel, err := metav1.LabelSelectorAsSelector(s)
	return err == nil && sel.Matches(l)
}

func portMatches(ports []networkingv1.NetworkPolicyPort, port int32) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if p.Port != nil && p.Port.IntValue() == int(port) {
			return true
		}
	}
	return false
}

// TestNoPprofAndNoInsecure: no workload of either overlay serves pprof or
// runs xDS in plaintext, and each service reads only its own NATS user.
func TestNoPprofAndNoInsecure(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			idx := index(renderOverlay(t, overlay))
			pods := map[string]corev1.PodSpec{}
			for name, w := range workloads(t, idx) {
				pods[name] = w.pod.Spec
			}
			var job batchv1.Job
			idx.decode(t, "Job", "gatewire-certgen", &job)
			pods["gatewire-certgen"] = job.Spec.Template.Spec
			checkPod(t, "gatewire-certgen", job.Spec.Template)
			for name, pod := range pods {
				for _, c := range pod.Containers {
					for _, e := range c.Env {
						if (e.Name == "GATEWIRE_ADMIN_PPROF" || e.Name == "GATEWIRE_XDS_INSECURE") && e.Value != "false" {
							t.Errorf("%s: %s=%q", name, e.Name, e.Value)
						}
					}
				}
				for _, v := range pod.Volumes {
					if v.Secret == nil || !strings.HasPrefix(v.Secret.SecretName, "gatewire-nats-") {
						continue
					}
					secret := v.Secret.SecretName
					switch {
					case secret == "gatewire-nats-tls" && name != "nats" && (len(v.Secret.Items) != 1 || v.Secret.Items[0].Key != "ca.crt"):
						t.Errorf("%s mounts the NATS servers' key (Secret %s): want ca.crt only", name, secret)
					case secret != "gatewire-nats-tls" && secret != "gatewire-nats-auth" && secret != natsUserOf(name):
						t.Errorf("%s mounts the NATS user %s, not its own", name, secret)
					}
				}
			}
		})
	}
}

// natsUserOf is the Secret of the NATS user of a workload.
func natsUserOf(workload string) string {
	if workload == "nats-box" {
		return "gatewire-nats-reader"
	}
	return "gatewire-nats-" + strings.TrimPrefix(workload, "gatewire-")
}
