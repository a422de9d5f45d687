package service_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/pkg/testkit"
)

func TestLoadNamesTheVariable(t *testing.T) {
	t.Setenv("GATEWIRE_NATS_REPLICAS", "9")
	t.Setenv("GATEWIRE_LOG_FORMAT", "xml")
	base := service.Base{AdminAddress: ":19001"}
	err := service.Load(&base)
	if err == nil {
		t.Fatal("Load accepted bad values")
	}
	for _, want := range []string{"GATEWIRE_NATS_REPLICAS", "GATEWIRE_LOG_FORMAT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestLoadReportsASharedErrorOnce loads two configurations that embed the
// same setting: its error is reported once.
func TestLoadReportsASharedErrorOnce(t *testing.T) {
	t.Setenv("GATEWIRE_CONTROLLER_NAME", "gatewire")
	var a, b struct{ gatewayclass.Config }
	err := service.Load(&a, &b)
	if err == nil || strings.Count(err.Error(), "GATEWIRE_CONTROLLER_NAME") != 1 {
		t.Errorf("error %v, want one naming GATEWIRE_CONTROLLER_NAME once", err)
	}
}

func TestLoadKeepsPresetDefaults(t *testing.T) {
	base := service.Base{AdminAddress: ":19001"}
	if err := service.Load(&base); err != nil {
		t.Fatal(err)
	}
	if base.AdminAddress != ":19001" || base.System != "gatewire" {
		t.Fatalf("base = %+v", base)
	}
}

type runner struct{ ready atomic.Bool }

func (r *runner) Run(ctx context.Context) error { r.ready.Store(true); <-ctx.Done(); return nil }
func (r *runner) Ready() bool                   { return r.ready.Load() }

func TestAdmin(t *testing.T) {
	r := &runner{}
	admin, err := service.NewAdmin("127.0.0.1:0", r.Ready, nil, service.WithPprof(true))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + admin.Addr().String()
	status := func(path string) int {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { done <- service.Group(ctx, admin.AdminRunner(log)) }()
	testkit.Eventually(t, 5*time.Second, "/healthz 200", func() bool { return status("/healthz") == 200 })
	if got := status("/readyz"); got != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before sync = %d", got)
	}
	r.ready.Store(true)
	if got := status("/readyz"); got != 200 {
		t.Fatalf("/readyz after sync = %d", got)
	}
	if got := status("/debug/pprof/"); got != 200 {
		t.Fatalf("/debug/pprof/ = %d", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestAdminWithoutPprof(t *testing.T) {
	admin, err := service.NewAdmin("127.0.0.1:0", func() bool { return true }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- service.Group(ctx, admin.AdminRunner(slog.New(slog.DiscardHandler))) }()
	defer func() { cancel(); <-done }()
	url := "http://" + admin.Addr().String()
	get := func(path string) int {
		return testkit.EventuallyValue(t, 5*time.Second, "an answer to GET "+path, func() (int, bool) {
			resp, err := http.Get(url + path)
			if err != nil {
				return 0, false
			}
			resp.Body.Close()
			return resp.StatusCode, true
		})
	}
	if got := get("/readyz"); got != 200 {
		t.Fatalf("/readyz = %d", got)
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/profile", "/debug/pprof/goroutine"} {
		if got := get(path); got != http.StatusNotFound {
			t.Errorf("%s = %d without pprof, want 404", path, got)
		}
	}
}

func TestLoadBusLimits(t *testing.T) {
	t.Setenv("GATEWIRE_BUS_MAX_VALUE_BYTES", "1073741824")
	t.Setenv("GATEWIRE_BUS_MAX_BYTES", "1000")
	base := service.Base{AdminAddress: ":19001"}
	err := service.Load(&base)
	for _, want := range []string{"GATEWIRE_BUS_MAX_VALUE_BYTES", "GATEWIRE_BUS_MAX_BYTES"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}
