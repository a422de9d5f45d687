package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/credentials/insecure"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
)

// tenantFolder writes the Gateway bench/eg and n tenant routes of
// gatewaytest under dir, one file per route and one per route's backends.
func tenantFolder(t testing.TB, dir string, n int) {
	t.Helper()
	write(t, filepath.Join(dir, "gateway.yaml"), gatewaytest.GatewayClass()+gatewaytest.Gateway("bench", "eg"))
	for i := range n {
		write(t, filepath.Join(dir, "backends", fmt.Sprintf("b%d.yaml", i)), gatewaytest.TenantBackends("bench", i))
		write(t, filepath.Join(dir, "routes", fmt.Sprintf("r%d.yaml", i)), gatewaytest.TenantRoute("bench", "eg", i))
	}
}

// editedRoute is tenant route i with x-route set to value instead of
// route-<i>.
func editedRoute(i int, value string) string {
	return strings.Replace(gatewaytest.TenantRoute("bench", "eg", i),
		fmt.Sprintf("value: route-%d}", i), "value: "+value+"}", 1)
}

// installation is gatewire running for a test: a nats-server and the four
// services as processes, or gatewire standalone, with an ADS recorder of
// the gateway bench/eg connected before any of them started.
type installation struct {
	procs    []*proc           // nats-server first when there is one
	admins   map[string]string // process name → admin address
	env      map[string][]string
	recorder *recorder
	began    time.Time // when the gatewire processes were started
}

// startServices starts a nats-server, connects the recorder, then starts
// the four services at once (the provider with providerEnv, file mode on
// dir when providerEnv is empty) and waits until they are ready. xDS is
// served in plaintext (GATEWIRE_XDS_INSECURE=true), so that the recorder
// needs no certificate; the security tests cover mTLS.
func startServices(t testing.TB, dir string, providerEnv ...string) *installation {
	t.Helper()
	return startServicesWith(t, dir, nil, providerEnv...)
}

// startServicesWith is startServices with env added to the environment of
// each service.
func startServicesWith(t testing.TB, dir string, env []string, providerEnv ...string) *installation {
	t.Helper()
	tmp := t.TempDir()
	natsAddr := freeAddr(t)
	host, port, _ := strings.Cut(natsAddr, ":")
	natsArgs := []string{"-a", host, "-p", port, "-js", "-sd", filepath.Join(tmp, "nats")}
	admins := map[string]string{}
	if profiling() {
		admins["nats-server"] = freeAddr(t)
		_, profPort, _ := strings.Cut(admins["nats-server"], ":")
		natsArgs = append(natsArgs, "--profile", profPort)
	}
	nats := start(t, "nats-server", nil, natsArgs...)
	waitListening(t, nats, natsAddr, 20*time.Second)
	if len(providerEnv) == 0 {
		providerEnv = []string{"GATEWIRE_PROVIDER_DIR=" + dir}
	}
	xdsAddr := freeAddr(t)
	in := &installation{procs: []*proc{nats}, admins: admins, env: map[string][]string{
		"provider":   providerEnv,
		"translator": nil,
		"xds":        {"GATEWIRE_XDS_ADDRESS=" + xdsAddr, "GATEWIRE_XDS_INSECURE=true"},
		"infra":      {"GATEWIRE_INFRA_BOOTSTRAP_DIR=" + filepath.Join(tmp, "bootstrap"), "GATEWIRE_INFRA_XDS_ADDRESS=" + xdsAddr, "GATEWIRE_XDS_INSECURE=true"},
	}}
	common := append([]string{"GATEWIRE_NATS_URL=nats://" + natsAddr, "GATEWIRE_SYSTEM=perf", "GATEWIRE_LOG_LEVEL=warn", pprofEnv()}, env...)
	for name := range in.env {
		in.admins[name] = freeAddr(t)
		in.env[name] = append(append([]string{"GATEWIRE_ADMIN_ADDRESS=" + in.admins[name]}, common...), in.env[name]...)
	}
	in.recorder = record(t, xdsAddr, "bench/eg", insecure.NewCredentials())
	in.began = time.Now()
	for _, name := range []string{"provider", "translator", "xds", "infra"} {
		in.procs = append(in.procs, start(t, name, in.env[name]))
	}
	for _, p := range in.procs[1:] {
		waitReady(t, p, in.admins[p.name], 2*time.Minute)
	}
	return in
}

// profiling reports whether the benchmarks save profiles (BENCH_PROFILE):
// then the processes serve /debug/pprof, nats-server's included.
func profiling() bool { return os.Getenv("BENCH_PROFILE") != "" }

// pprofEnv turns /debug/pprof on when the benchmarks save profiles and
// leaves it off, as it is by default, otherwise: serving it makes the
// runtime sample allocations (service.SampleAllocations), about 1 MiB
// resident in each process, which the memory figures would count.
func pprofEnv() string { return fmt.Sprintf("GATEWIRE_ADMIN_PPROF=%t", profiling()) }

// startStandalone connects the recorder, then starts gatewire standalone
// on dir. xDS is served in plaintext (GATEWIRE_XDS_INSECURE=true): a
// client of mTLS needs the CA standalone makes when it starts, and the
// recorder connects before.
func startStandalone(t testing.TB, dir string, env ...string) *installation {
	t.Helper()
	tmp := t.TempDir()
	xdsAddr, natsAddr, admin := freeAddr(t), freeAddr(t), freeAddr(t)
	in := &installation{admins: map[string]string{"gatewire": admin}}
	in.recorder = record(t, xdsAddr, "bench/eg", insecure.NewCredentials())
	in.began = time.Now()
	in.procs = append(in.procs, start(t, "gatewire", append([]string{
		"GATEWIRE_XDS_ADDRESS=" + xdsAddr,
		"GATEWIRE_XDS_INSECURE=true",
		"GATEWIRE_INFRA_XDS_ADDRESS=" + xdsAddr,
		"GATEWIRE_STANDALONE_NATS_LISTEN=" + natsAddr,
		"GATEWIRE_STANDALONE_STORE_DIR=" + filepath.Join(tmp, "nats"),
		"GATEWIRE_STANDALONE_AUTH_DIR=" + filepath.Join(tmp, "auth"),
		"GATEWIRE_INFRA_BOOTSTRAP_DIR=" + filepath.Join(tmp, "bootstrap"),
		"GATEWIRE_ADMIN_ADDRESS=" + admin,
		pprofEnv(),
		"GATEWIRE_LOG_LEVEL=warn",
	}, env...), "standalone", "-dir", dir))
	waitReady(t, in.procs[0], admin, 2*time.Minute)
	return in
}

// restart kills the named service with SIGKILL and starts it again with
// the same environment.
func (in *installation) restart(t testing.TB, name string) {
	t.Helper()
	for i, p := range in.procs {
		if p.name != name && !strings.HasPrefix(p.name, name+"-") {
			continue
		}
		_ = p.cmd.Process.Kill()
		<-p.done
		q := start(t, fmt.Sprintf("%s-%d", name, i), in.env[name])
		in.procs[i] = q
		in.admins[q.name] = in.admins[name]
		waitReady(t, q, in.admins[name], 2*time.Minute)
		return
	}
	t.Fatalf("no process %s", name)
}
