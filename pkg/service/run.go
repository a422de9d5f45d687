package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gatewire/gatewire/pkg/buildinfo"
	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/natsauth"
	"github.com/gatewire/gatewire/pkg/telemetry"
)

// Runner is a running service.
type Runner interface {
	// Run blocks until ctx is done and returns nil then.
	Run(ctx context.Context) error
	// Ready reports whether the runner has synced its input buckets.
	Ready() bool
}

// Build makes a runner from its bus and logger.
type Build func(b *bus.Bus, log *slog.Logger) (Runner, error)

// Main is the whole main function of a service binary: it loads base and
// cfg from the environment (adminAddress is the default admin address),
// connects, builds the runner and runs it until SIGINT or SIGTERM. It
// exits the process with status 2 on a configuration error, 1 on failure.
//
// A default admin address without a host (":19001") listens on loopback
// only: the admin port serves metrics and probes to this host unless
// GATEWIRE_ADMIN_ADDRESS says otherwise (":19001" in a pod, for the
// kubelet and Prometheus, behind a NetworkPolicy).
func Main(name, adminAddress string, cfg any, build Build) {
	if strings.HasPrefix(adminAddress, ":") {
		adminAddress = "127.0.0.1" + adminAddress
	}
	base := Base{AdminAddress: adminAddress}
	if len(os.Args) > 1 && (os.Args[1] == "-h" || os.Args[1] == "--help") {
		fmt.Printf("gatewire %s is configured by these environment variables:\n\n", name)
		if err := Usage(os.Stdout, &base, cfg); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if err := Load(&base, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "gatewire %s: configuration:\n%v\n", name, err)
		os.Exit(2)
	}
	SampleAllocations(base.AdminPprof)
	log := base.Logger().With("service", name)
	log.Info("service starting", "version", buildinfo.Version(), "commit", buildinfo.Commit())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, name, base, log, build); err != nil {
		log.Error("service failed", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, name string, base Base, log *slog.Logger, build Build) error {
	tel, err := telemetry.Setup(ctx, "gatewire-"+name, telemetry.WithLogger(log))
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	nc, err := Connect(base, name, log)
	if err != nil {
		return err
	}
	defer nc.Close()
	b, err := OpenBus(ctx, nc, base, log, CreateOptions(base, name)...)
	if err != nil {
		return err
	}
	r, err := build(b, log)
	if err != nil {
		return err
	}
	admin, err := NewAdmin(base.AdminAddress, r.Ready, tel.Handler(), WithPprof(base.AdminPprof), WithNATS(nc))
	if err != nil {
		return err
	}
	return Group(ctx, admin.runner(log), base.Memory.Runner(r.Ready, log), r)
}

// Connect dials NATS as the service name (its natsauth role) with the
// credentials and TLS files of base (see [NATSOptions]), and keeps
// reconnecting for ever; it does not wait for the server to be up.
func Connect(base Base, name string, log *slog.Logger) (*nats.Conn, error) {
	auth, err := NATSOptions(base, name, log)
	if err != nil {
		return nil, err
	}
	opts := []nats.Option{
		nats.Name("gatewire-" + name),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("nats disconnected", "error", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", "url", c.ConnectedUrl()) }),
	}
	nc, err := nats.Connect(base.NATSURL, append(opts, auth...)...)
	if err != nil {
		return nil, fmt.Errorf("%s_NATS_URL %s: %w", Prefix, base.NATSURL, err)
	}
	return nc, nil
}

// CreateOptions are the bus options of service name: with NATS
// credentials, its user may create only the buckets its role owns
// (natsauth.Creates), so it creates those and waits for the others;
// without credentials (a development server) it creates every bucket.
func CreateOptions(base Base, name string) []bus.Option {
	role, err := natsauth.ParseRole(name)
	if err != nil || !base.hasCredentials() {
		return nil
	}
	buckets, objects := natsauth.Creates(role)
	if objects {
		buckets = append(buckets, bus.Objects)
	}
	return []bus.Option{bus.WithCreate(buckets...)}
}

// OpenBus opens the buckets with opts, retrying until NATS answers (and the
// buckets others create exist) or ctx is done.
func OpenBus(ctx context.Context, nc *nats.Conn, base Base, log *slog.Logger, opts ...bus.Option) (*bus.Bus, error) {
	delay := 250 * time.Millisecond
	for {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		b, err := bus.New(attempt, nc, append(append(base.BusOptions(), bus.WithLogger(log)), opts...)...)
		cancel()
		if err == nil {
			return b, nil
		}
		if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
			// A bucket that another service creates (see CreateOptions).
			log.Info("waiting for the buckets of other services", "error", err)
		} else {
			log.Warn("waiting for nats jetstream", "url", base.NATSURL, "error", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open bus: %w", errors.Join(ctx.Err(), err))
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

type runFunc struct {
	run   func(context.Context) error
	ready func() bool
}

func (r runFunc) Run(ctx context.Context) error { return r.run(ctx) }
func (r runFunc) Ready() bool                   { return r.ready() }

func (a *Admin) runner(log *slog.Logger) Runner {
	return runFunc{run: func(ctx context.Context) error { return a.Run(ctx, log) }, ready: func() bool { return true }}
}

// AdminRunner wraps the admin server as a Runner for [Group].
func (a *Admin) AdminRunner(log *slog.Logger) Runner { return a.runner(log) }

// AllReady reports whether every runner is ready.
func AllReady(runners ...Runner) func() bool {
	return func() bool {
		for _, r := range runners {
			if !r.Ready() {
				return false
			}
		}
		return true
	}
}

// Group runs every runner until ctx is done or one of them fails; then it
// stops the others and returns the first error.
func Group(ctx context.Context, runners ...Runner) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.Run(ctx)
			if err == nil && ctx.Err() == nil {
				err = errors.New("service stopped on its own")
			}
			if err != nil && ctx.Err() == nil {
				once.Do(func() { first = err })
				cancel()
			}
		}()
	}
	wg.Wait()
	return first
}
