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
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/buildinfo"
	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/natsauth"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/pkg/telemetry"
	"github.com/gatewire/gatewire/services/infra"
	infrakube "github.com/gatewire/gatewire/services/infra/kube"
	"github.com/gatewire/gatewire/services/provider"
	providerkube "github.com/gatewire/gatewire/services/provider/kube"
	"github.com/gatewire/gatewire/services/translator"
	"github.com/gatewire/gatewire/services/xds"
)

// standaloneConfig is what standalone mode adds to the services' own
// configuration: where the embedded NATS server listens and stores, and
// which services run in this process.
type standaloneConfig struct {
	NATSListen string `envconfig:"STANDALONE_NATS_LISTEN" default:"127.0.0.1:4222" desc:"loopback address of the embedded NATS server (for taps and for services run elsewhere on this host); empty: in-process only"`
	StoreDir   string `envconfig:"STANDALONE_STORE_DIR" default:".gatewire/nats" desc:"folder where the embedded NATS server keeps its buckets"`
	AuthDir    string `envconfig:"STANDALONE_AUTH_DIR" default:".gatewire/auth" desc:"folder of the embedded NATS server's users: an nkey seed per role (<role>.nk; gatewire tap and status use reader.nk) and auth.conf"`
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
		_ = service.Usage(fs.Output(), cfg.all()...)
	}
	dir := fs.String("dir", "", "folder of Gateway API manifests to serve (sets GATEWIRE_PROVIDER_DIR)")
	insecure := fs.Bool("insecure-xds", false, "development only: serve xDS in plaintext and write plaintext bootstraps (sets GATEWIRE_XDS_INSECURE=true)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir != "" {
		if err := os.Setenv("GATEWIRE_PROVIDER_DIR", *dir); err != nil {
			return err
		}
	}
	if *insecure {
		if err := os.Setenv("GATEWIRE_XDS_INSECURE", "true"); err != nil {
			return err
		}
	}
	if err := service.Load(cfg.all()...); err != nil {
		return usageError("configuration:\n%v", err)
	}
	service.SampleAllocations(cfg.base.AdminPprof)
	standaloneXDSAddress(cfg)
	log := cfg.base.Logger()
	log.Info("gatewire standalone starting", "version", buildinfo.Version(), "commit", buildinfo.Commit())
	tel, err := telemetry.Setup(ctx, "gatewire-standalone", telemetry.WithLogger(log))
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	seeds, conf, err := standaloneAuth(cfg.standalone.AuthDir, cfg.standalone.StoreDir, cfg.base.System)
	if err != nil {
		return err
	}
	ns, err := startNATS(cfg.standalone, conf, log)
	if err != nil {
		return err
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	buses, closeBuses, err := openBuses(ctx, ns, cfg, seeds, log)
	defer closeBuses()
	if err != nil {
		return err
	}
	return serve(ctx, cfg, buses, tel, log, stdout)
}

// openBuses connects each service of this process to the embedded server
// as its own user, as separate processes would, and opens its buses at
// once: each creates the buckets it owns and waits for the others'.
func openBuses(ctx context.Context, ns *server.Server, cfg *configs, seeds map[natsauth.Role]string, log *slog.Logger) (map[string]*bus.Bus, func(), error) {
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		conns []*nats.Conn
		errs  []error
		buses = map[string]*bus.Bus{}
	)
	closeAll := func() {
		for _, nc := range conns {
			nc.Close()
		}
	}
	for _, name := range cfg.standalone.services() {
		base := cfg.base
		base.NATSCreds, base.NATSNkeySeed = "", seeds[natsauth.Role(name)]
		l := log.With("service", name)
		auth, err := service.NATSOptions(base, name, l)
		if err != nil {
			return nil, closeAll, err
		}
		nc, err := nats.Connect(ns.ClientURL(), append(auth, nats.InProcessServer(ns), nats.MaxReconnects(-1), nats.Name("gatewire-standalone-"+name))...)
		if err != nil {
			return nil, closeAll, fmt.Errorf("%s: connect to the embedded NATS server: %w", name, err)
		}
		conns = append(conns, nc)
		wg.Go(func() {
			b, err := service.OpenBus(ctx, nc, base, l, service.CreateOptions(base, name)...)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
			buses[name] = b
		})
	}
	wg.Wait()
	return buses, closeAll, errors.Join(errs...)
}

// serve builds the configured services, each over its own bus, and runs
// them with the admin server until ctx is done.
func serve(ctx context.Context, cfg *configs, buses map[string]*bus.Bus, tel *telemetry.Telemetry, log *slog.Logger, stdout io.Writer) error {
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
			b   = buses[name]
		)
		switch name {
		case "provider":
			r, err = provider.New(cfg.provider, b, l, provider.WithKubernetes(providerkube.Mode))
		case "translator":
			r, err = translator.New(cfg.translator, b, l)
		case "xds":
			xs, err = newXDS(ctx, cfg, b, l)
			r = xs
		case "infra":
			inf, err = infra.New(cfg.infra, b, l, infra.WithKubernetes(infrakube.Connect(nil)))
			r = inf
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		runners = append(runners, r)
	}
	admin, err := service.NewAdmin(cfg.base.AdminAddress, service.AllReady(runners...), tel.Handler(), service.WithPprof(cfg.base.AdminPprof))
	if err != nil {
		return err
	}
	go announce(ctx, buses["infra"], runners, xs, inf, cfg, stdout)
	memory := cfg.base.Memory.Runner(service.AllReady(runners...), log)
	return service.Group(ctx, append(runners, admin.AdminRunner(log), memory)...)
}

// startNATS starts the embedded server of conf (its users, see
// standaloneAuth), listening on the loopback address cfg.NATSListen.
func startNATS(cfg standaloneConfig, conf string, log *slog.Logger) (*server.Server, error) {
	opts, err := embeddedOptions(conf, cfg.NATSListen)
	if err != nil {
		return nil, err
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
	log.Info("embedded nats server started", "url", ns.ClientURL(), "store", cfg.StoreDir, "users", cfg.AuthDir)
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
		fmt.Fprintf(w, "  NATS:       nats://%s (gatewire tap; users in %s)\n", cfg.standalone.NATSListen, cfg.standalone.AuthDir)
	}
	if xs != nil {
		security := "mTLS, clients need a certificate of the CA in " + caDirOf(cfg)
		if cfg.infra.XDSInsecure {
			security = "PLAINTEXT (GATEWIRE_XDS_INSECURE=true)"
		}
		fmt.Fprintf(w, "  xDS (ADS):  %s (%s)\n", xs.Addr(), security)
	}
	fmt.Fprintf(w, "  admin:      http://%s/readyz\n", cfg.base.AdminAddress)
	if inf == nil {
		return
	}
	// Give the translator a moment to publish what the provider read.
	time.Sleep(500 * time.Millisecond)
	if b == nil {
		return
	}
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
