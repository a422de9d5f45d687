package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/buildinfo"
	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/pkg/telemetry"
	"github.com/gatewire/gatewire/services/infra"
	"github.com/gatewire/gatewire/services/provider"
	"github.com/gatewire/gatewire/services/translator"
	"github.com/gatewire/gatewire/services/xds"
)

// standaloneConfig is what standalone mode adds to the services' own
// configuration: where the embedded NATS server listens and stores, and
// which services run in this process.
type standaloneConfig struct {
	NATSListen string `envconfig:"STANDALONE_NATS_LISTEN" default:"127.0.0.1:4222" desc:"address of the embedded NATS server (for taps and for services run elsewhere); empty: in-process only"`
	StoreDir   string `envconfig:"STANDALONE_STORE_DIR" default:".gatewire/nats" desc:"folder where the embedded NATS server keeps its buckets"`
	Services   string `envconfig:"STANDALONE_SERVICES" default:"provider,translator,xds,infra" desc:"comma-separated services to run in this process"`
}

var allServices = []string{"provider", "translator", "xds", "infra"}

func (c standaloneConfig) Validate() error {
	for _, s := range c.services() {
		if !slices.Contains(allServices, s) {
			return fmt.Errorf("GATEWIRE_STANDALONE_SERVICES: unknown service %q: want some of %s", s, strings.Join(allServices, ","))
		}
	}
	return nil
}

func (c standaloneConfig) services() []string {
	var out []string
	for _, s := range strings.Split(c.Services, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// configs is every configuration standalone mode loads.
type configs struct {
	base       service.Base
	standalone standaloneConfig
	provider   provider.Config
	translator translator.Config
	xds        xds.Config
	infra      infra.Config
}

func (c *configs) all() []any {
	return []any{&c.base, &c.standalone, &c.provider, &c.translator, &c.xds, &c.infra}
}

func runStandalone(ctx context.Context, args []string, stdout io.Writer) error {
	cfg := &configs{base: service.Base{AdminAddress: "127.0.0.1:19100"}}
	fs := flag.NewFlagSet("standalone", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gatewire standalone [flags]\n\nRuns an embedded NATS server and the four services in one process.\n\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "\nEnvironment:")
		service.Usage(cfg.all()...)
	}
	dir := fs.String("dir", "", "folder of Gateway API manifests to serve (sets GATEWIRE_PROVIDER_DIR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir != "" {
		if err := os.Setenv("GATEWIRE_PROVIDER_DIR", *dir); err != nil {
			return err
		}
	}
	if err := service.Load(cfg.all()...); err != nil {
		return usageError("configuration:\n%v", err)
	}
	log := cfg.base.Logger()
	log.Info("gatewire standalone starting", "version", buildinfo.Version(), "commit", buildinfo.Commit())
	tel, err := telemetry.Setup(ctx, "gatewire-standalone", telemetry.WithLogger(log))
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	ns, err := startNATS(cfg.standalone, log)
	if err != nil {
		return err
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	nc, err := nats.Connect(ns.ClientURL(), nats.InProcessServer(ns), nats.MaxReconnects(-1), nats.Name("gatewire-standalone"))
	if err != nil {
		return fmt.Errorf("connect to the embedded NATS server: %w", err)
	}
	defer nc.Close()
	b, err := service.OpenBus(ctx, nc, cfg.base, log)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, b, tel, log, stdout)
}

// serve builds the configured services over b and runs them with the admin
// server until ctx is done.
func serve(ctx context.Context, cfg *configs, b *bus.Bus, tel *telemetry.Telemetry, log *slog.Logger, stdout io.Writer) error {
	var (
		runners []service.Runner
		inf     *infra.Service
		xs      *xds.Service
	)
	for _, name := range cfg.standalone.services() {
		l := log.With("service", name)
		var (
			r   service.Runner
			err error
		)
		switch name {
		case "provider":
			r, err = provider.New(cfg.provider, b, l)
		case "translator":
			r, err = translator.New(cfg.translator, b, l)
		case "xds":
			xs, err = xds.New(cfg.xds, b, l)
			r = xs
		case "infra":
			inf, err = infra.New(cfg.infra, b, l)
			r = inf
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		runners = append(runners, r)
	}
	admin, err := service.NewAdmin(cfg.base.AdminAddress, service.AllReady(runners...), tel.Handler())
	if err != nil {
		return err
	}
	go announce(ctx, b, runners, xs, inf, cfg, stdout)
	return service.Group(ctx, append(runners, admin.AdminRunner(log))...)
}

func startNATS(cfg standaloneConfig, log *slog.Logger) (*server.Server, error) {
	opts := &server.Options{
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		NoSigs:     true,
		NoLog:      true,
		DontListen: cfg.NATSListen == "",
		ServerName: "gatewire-standalone",
	}
	if cfg.NATSListen != "" {
		host, port, err := splitPort(cfg.NATSListen)
		if err != nil {
			return nil, usageError("GATEWIRE_STANDALONE_NATS_LISTEN: %v", err)
		}
		opts.Host, opts.Port = host, port
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("embedded NATS server did not start within 10s (is the port in use? set GATEWIRE_STANDALONE_NATS_LISTEN)")
	}
	log.Info("embedded nats server started", "url", ns.ClientURL(), "store", cfg.StoreDir)
	return ns, nil
}

// announce prints, once every service is ready, where Envoy should connect
// and the bootstrap of every gateway.
func announce(ctx context.Context, b *bus.Bus, runners []service.Runner, xs *xds.Service, inf *infra.Service, cfg *configs, w io.Writer) {
	ready := service.AllReady(runners...)
	for !ready() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	fmt.Fprintln(w, "gatewire standalone is ready.")
	if cfg.standalone.NATSListen != "" {
		fmt.Fprintf(w, "  NATS:       nats://%s (gatewire tap)\n", cfg.standalone.NATSListen)
	}
	if xs != nil {
		fmt.Fprintf(w, "  xDS (ADS):  %s\n", xs.Addr())
	}
	fmt.Fprintf(w, "  admin:      http://%s/readyz\n", cfg.base.AdminAddress)
	if inf == nil {
		return
	}
	// Give the translator a moment to publish what the provider read.
	time.Sleep(500 * time.Millisecond)
	keys, _ := b.Keys(ctx, bus.Infra, ">")
	slices.Sort(keys)
	for _, k := range keys {
		ns, name, err := bus.ParseGatewayKey(k)
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "  gateway %s/%s: envoy -c %s\n", ns, name, inf.BootstrapPath(ns, name))
	}
}
