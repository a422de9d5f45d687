package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

type syncRunner struct{ ready atomic.Bool }

func (r *syncRunner) Run(ctx context.Context) error { r.ready.Store(true); <-ctx.Done(); return nil }
func (r *syncRunner) Ready() bool                   { return r.ready.Load() }

// TestReadyzFollowsNATS runs a service as Main does against a real
// nats-server, stops the server and starts it again: /readyz says not
// ready while the connection is lost, and ready once it is back.
func TestReadyzFollowsNATS(t *testing.T) {
	srv := bustest.StartRestartable(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := Base{NATSURL: srv.URL(), NATSReplicas: 1, System: "readyz", AdminAddress: addr, LogLevel: "info", LogFormat: "text",
		BusMaxValueBytes: bus.DefaultMaxValueBytes, BusMaxBytes: 64 << 20}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		done <- run(ctx, "infra", base, log, func(*bus.Bus, *slog.Logger) (Runner, error) { return &syncRunner{}, nil })
	}()
	defer func() { cancel(); <-done }()
	readyz := func() (int, string) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	wait := func(want int, why string) string {
		t.Helper()
		return testkit.EventuallyValue(t, 15*time.Second, fmt.Sprintf("%s: /readyz %d", why, want), func() (string, bool) {
			code, body := readyz()
			return fmt.Sprintf("%d %s", code, body), code == want
		})
	}
	wait(http.StatusOK, "synced and connected")
	srv.Stop()
	if body := wait(http.StatusServiceUnavailable, "nats-server stopped"); !strings.Contains(body, "nats") {
		t.Errorf("/readyz while NATS is away says %q; want it to name NATS", body)
	}
	srv.Start()
	wait(http.StatusOK, "nats-server back")
}
