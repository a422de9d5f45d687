package xds

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc"

	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// fanoutClient is the benchmark's client process, driven over its
// standard input and output.
type fanoutClient struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	lines []string
}

func startFanOutClient(b *testing.B, addrs []string, n int, v1 *busv1.XdsSnapshot) *fanoutClient {
	want := []string{versionOf(v1, typeCluster), versionOf(v1, typeEndpoint), versionOf(v1, typeListener), versionOf(v1, typeRoute)}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFanOutClientProcess$", "-test.count=1", "-test.v")
	// The client decodes every response it gets; a higher GOGC spares the
	// shared cores some of its collections.
	cmd.Env = append(os.Environ(), "GOGC=400", fmt.Sprintf("%s=%s;%d;%s", fanoutClientEnv, strings.Join(addrs, ","), n, strings.Join(want, ",")))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &fanoutClient{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	c.out.Buffer(make([]byte, 1<<20), 64<<20)
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return c
}

// expect reads lines until one starts with prefix and returns the rest.
func (c *fanoutClient) expect(b *testing.B, prefix string) string {
	for c.out.Scan() {
		if rest, ok := strings.CutPrefix(c.out.Text(), prefix); ok {
			return strings.TrimSpace(rest)
		}
		if line := c.out.Text(); !strings.HasPrefix(line, "===") {
			fmt.Fprintln(os.Stderr, "client:", line)
		}
	}
	b.Fatalf("the client ended before saying %q: %v", prefix, c.out.Err())
	return ""
}

func (c *fanoutClient) send(b *testing.B, line string) {
	if _, err := fmt.Fprintln(c.in, line); err != nil {
		b.Fatal(err)
	}
}

// arrivals are the times (unix nanoseconds) each stream received the
// version it was told to wait for.
func (c *fanoutClient) arrivals(b *testing.B) []int64 {
	var out []int64
	for f := range strings.FieldsSeq(c.expect(b, "arrivals")) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// cpu is the client's CPU time while it waited.
func (c *fanoutClient) cpu(b *testing.B) time.Duration {
	d, err := time.ParseDuration(c.expect(b, "cpu"))
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func (c *fanoutClient) stop(b *testing.B) {
	_ = c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		b.Error("the client did not end within 30s")
	}
}

// TestFanOutClientProcess is the body of the fan-out benchmark's client
// process: it opens the streams over connections of 10, round robin over
// the servers, says "ready" once every stream holds the first versions,
// then for each "wait <version>" line it waits until every stream holds
// that route configuration version and prints their arrival times and
// its CPU time meanwhile. It ends when its standard input closes. Run as
// a plain test it has nothing to do.
func TestFanOutClientProcess(t *testing.T) {
	spec := os.Getenv(fanoutClientEnv)
	if spec == "" {
		return
	}
	parts := strings.Split(spec, ";")
	addrs := strings.Split(parts[0], ",")
	n, _ := strconv.Atoi(parts[1])
	want := strings.Split(parts[2], ",")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := make([]*envoyClient, n)
	conns := n / fanoutPerConn
	if n%fanoutPerConn != 0 {
		conns++
	}
	pool := make([]*grpc.ClientConn, conns)
	for i := range conns {
		pool[i] = dialFleet(t, addrs[i%len(addrs)], 1, envoyWindow)[0]
	}
	for i := range n {
		c, err := startEnvoy(ctx, pool[i/fanoutPerConn], &core.Node{Id: fmt.Sprintf("envoy-%d", i), Cluster: fanoutGateway}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	types := []int{typeCluster, typeEndpoint, typeListener, typeRoute}
	wait, cancelWait := context.WithTimeout(ctx, 5*time.Minute)
	for _, c := range clients {
		for j, i := range types {
			if _, err := c.waitVersion(wait, typeURLs[i], want[j]); err != nil {
				t.Fatal(err)
			}
		}
	}
	cancelWait()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		version, ok := strings.CutPrefix(in.Text(), "wait ")
		if !ok {
			continue
		}
		before := testkit.CPUTime()
		wait, cancelWait := context.WithTimeout(ctx, 2*time.Minute)
		var line strings.Builder
		for _, c := range clients {
			at, err := c.waitVersion(wait, typeURLs[typeRoute], version)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&line, " %d", at.UnixNano())
		}
		cancelWait()
		fmt.Println("arrivals" + line.String())
		fmt.Println("cpu", testkit.CPUTime()-before)
	}
}
