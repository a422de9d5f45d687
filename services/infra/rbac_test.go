package infra_test

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// rbacRules reads the rules of the ClusterRole and the Role of rbac.yaml.
func rbacRules(t *testing.T) (cluster, lease []rbacv1.PolicyRule) {
	t.Helper()
	data, err := os.ReadFile("rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var obj struct {
			Kind  string              `json:"kind"`
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("rbac.yaml: %v", err)
		}
		switch obj.Kind {
		case "ClusterRole":
			cluster = obj.Rules
		case "Role":
			lease = obj.Rules
		}
	}
	if len(cluster) == 0 || len(lease) == 0 {
		t.Fatalf("rbac.yaml: ClusterRole rules %v, Role rules %v: want both", cluster, lease)
	}
	return cluster, lease
}

// TestKubernetesRBAC runs the service as a user that has exactly the
// permissions of rbac.yaml: the ClusterRole cluster-wide, the Role in the
// namespace of the Lease.
func TestKubernetesRBAC(t *testing.T) {
	k := newKubeTest(t)
	b := newBus(t)
	clusterRules, leaseRules := rbacRules(t)
	user := "gatewire-infra-" + k.ns
	k.create(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: clusterRules})
	k.create(&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})
	k.create(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: "lease"}, Rules: leaseRules})
	k.create(&rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: "lease"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "lease"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})
	rc, err := k.env.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	// A stale object, for the prune at start.
	stale := k.configMap("gatewire-gone", b.System(), k.ns+"/gone")

	// Every refusal of the API server is logged (by the service, or by
	// client-go's informers and leader election through it).
	denied := &deniedLog{t: t}
	k.log = slog.New(slog.NewTextHandler(denied, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(denied.check)

	cfg := kubeConfig()
	cfg.LeaderElection, cfg.LeaderElectionNamespace = true, k.ns
	s, _ := k.startKubeAs(cfg, b, rc)
	testkit.Eventually(t, waitTimeout, "leading", s.Leading)
	k.waitLeaseRenewed(b.System() + "-infra")
	if err := k.c.Get(k.ctx, client.ObjectKeyFromObject(stale), stale); err == nil {
		t.Errorf("stale ConfigMap not pruned")
	}
	putProxy(t, b, kubeProxy(k.ns, "edge"))
	o := k.waitObjects(k.ns, "gatewire-edge", "objects applied by the user", nil)
	waitAddresses(t, b, k.ns, "edge", []string{o.svc.Spec.ClusterIP})
	deleteKey(t, b, k.ns, "edge")
	k.waitGone(k.ns, "gatewire-edge")
	waitAddresses(t, b, k.ns, "edge", nil)
}

func (k *kubeTest) create(obj client.Object) {
	k.t.Helper()
	if err := k.c.Create(k.ctx, obj); err != nil {
		k.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// waitLeaseRenewed waits until the Lease name in the test's namespace has been
// renewed once, so that renewing is covered too.
func (k *kubeTest) waitLeaseRenewed(name string) {
	k.t.Helper()
	renewed := func() *metav1.MicroTime {
		var l coordinationv1.Lease
		if err := k.c.Get(k.ctx, client.ObjectKey{Namespace: k.ns, Name: name}, &l); err != nil {
			k.t.Fatalf("get Lease: %v", err)
		}
		return l.Spec.RenewTime
	}
	first := renewed()
	testkit.Eventually(k.t, waitTimeout, "lease renewed", func() bool {
		now := renewed()
		return first != nil && now != nil && !now.Equal(first)
	})
}

// deniedLog passes a log on to the test and remembers lines that say the API
// server refused a request.
type deniedLog struct {
	t      *testing.T
	mu     sync.Mutex
	denied []string
}

func (d *deniedLog) Write(p []byte) (int, error) {
	line := strings.TrimSuffix(string(p), "\n")
	d.t.Log(line)
	if strings.Contains(line, "forbidden") {
		d.mu.Lock()
		d.denied = append(d.denied, line)
		d.mu.Unlock()
	}
	return len(p), nil
}

func (d *deniedLog) check() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, line := range d.denied {
		d.t.Errorf("request refused with the permissions of rbac.yaml: %s", line)
	}
}
