package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/nats-io/nats.go"
)

// Admin is the admin HTTP server of a process.
type Admin struct {
	srv *http.Server
	ln  net.Listener
}

// AdminOption changes what the admin server serves.
type AdminOption func(*adminOptions)

type adminOptions struct {
	pprof bool
	nc    *nats.Conn
}

// WithNATS makes /readyz report not ready while nc is not connected: the
// service's view of the bus is frozen then (the xds service keeps serving
// its last snapshots to the Envoys that have them, whatever /readyz says).
func WithNATS(nc *nats.Conn) AdminOption { return func(o *adminOptions) { o.nc = nc } }

// WithPprof serves /debug/pprof when on (GATEWIRE_ADMIN_PPROF). It is off
// by default: profiles, goroutine stacks and the command line are for
// debugging, not for whoever reaches the admin port.
func WithPprof(on bool) AdminOption { return func(o *adminOptions) { o.pprof = on } }

// NewAdmin listens on addr and serves /healthz, /readyz (ready reports
// whether every runner is ready, and WithNATS whether NATS is connected), /metrics, and /debug/pprof WithPprof.
func NewAdmin(addr string, ready func() bool, metrics http.Handler, opts ...AdminOption) (*Admin, error) {
	var o adminOptions
	for _, opt := range opts {
		opt(&o)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin server on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if o.nc != nil && !o.nc.IsConnected() {
			http.Error(w, "not ready: nats connection lost ("+o.nc.Status().String()+")", http.StatusServiceUnavailable)
			return
		}
		if !ready() {
			http.Error(w, "not ready: input buckets not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	if metrics != nil {
		mux.Handle("/metrics", metrics)
	}
	if o.pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return &Admin{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln}, nil
}

// Addr is the address the admin server listens on.
func (a *Admin) Addr() net.Addr { return a.ln.Addr() }

// Run serves until ctx is done.
func (a *Admin) Run(ctx context.Context, log *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- a.srv.Serve(a.ln) }()
	log.Info("admin server listening", "address", a.ln.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("admin server: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
