package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/service"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra"
)

func runBootstrap(ctx context.Context, args []string, stdout io.Writer) error {
	var cfg infra.Config
	if err := service.Load(&cfg); err != nil {
		return usageError("configuration:\n%v", err)
	}
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gatewire bootstrap [flags] namespace/gateway")
		fmt.Fprintln(fs.Output(), "\nPrints the Envoy bootstrap the infra service writes for a gateway, from the gateway's")
		fmt.Fprintln(fs.Output(), "value in the infra bucket: in host mode its bootstrap file, in kubernetes mode the")
		fmt.Fprintln(fs.Output(), "bootstrap of its ConfigMap. The flags default to the infra service's variables")
		fmt.Fprintln(fs.Output(), "(GATEWIRE_INFRA_MODE, GATEWIRE_INFRA_XDS_ADDRESS, GATEWIRE_INFRA_ADMIN_PORT, ...).\n\nFlags:")
		fs.PrintDefaults()
	}
	conn := busFlags(fs)
	fs.StringVar(&cfg.Mode, "mode", cfg.Mode, "host or kubernetes, as GATEWIRE_INFRA_MODE")
	fs.StringVar(&cfg.XDSAddress, "xds-address", cfg.XDSAddress, "host:port of the xds service, as GATEWIRE_INFRA_XDS_ADDRESS (empty: the mode's default)")
	fs.IntVar(&cfg.AdminPort, "admin-port", cfg.AdminPort, "Envoy's admin port on 127.0.0.1, as GATEWIRE_INFRA_ADMIN_PORT")
	fs.StringVar(&cfg.BootstrapDir, "bootstrap-dir", cfg.BootstrapDir, "host mode: the folder of the bootstraps and of each gateway's certificate folder, as GATEWIRE_INFRA_BOOTSTRAP_DIR")
	fs.BoolVar(&cfg.XDSInsecure, "insecure", cfg.XDSInsecure, "development only: a bootstrap that reaches the xds service in plaintext, as GATEWIRE_XDS_INSECURE")
	host, _ := os.Hostname()
	instance := fs.String("instance", host, "host mode: the last part of node.id, the host name of the infra service")
	format := fs.String("o", "yaml", "output format: yaml or json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ns, gw, err := gatewayArg(fs.Args())
	if err != nil {
		return err
	}
	if *format != "json" && *format != "yaml" {
		return usageError("-o %q: want yaml or json", *format)
	}
	if err := cfg.Validate(); err != nil {
		return usageError("%v", err)
	}
	b, closeBus, err := conn.open(ctx, "gatewire-bootstrap")
	if err != nil {
		return err
	}
	defer closeBus()
	proxy, err := readProxy(ctx, b, ns, gw)
	if err != nil {
		return err
	}
	out, err := infra.Bootstrap(cfg, b.System(), *instance, proxy)
	if err != nil {
		return fmt.Errorf("gateway %s/%s: %w", ns, gw, err)
	}
	if *format == "json" {
		data, err := yaml.YAMLToJSON(out)
		if err != nil {
			return err
		}
		return printJSON(stdout, "json", data)
	}
	_, err = stdout.Write(out)
	return err
}

// readProxy reads the value of a gateway in the infra bucket.
func readProxy(ctx context.Context, b *bus.Bus, ns, gw string) (*busv1.Proxy, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	e, err := b.Get(ctx, bus.Infra, bus.GatewayKey(ns, gw))
	if errors.Is(err, bus.ErrNotFound) {
		return nil, fmt.Errorf("gateway %s/%s: the infra bucket has nothing of it (not a gatewire Gateway, or not translated yet; see gatewire status)", ns, gw)
	}
	if err != nil {
		return nil, fmt.Errorf("gateway %s/%s: %w", ns, gw, err)
	}
	proxy, ok := e.Value.(*busv1.Proxy)
	if !ok {
		return nil, fmt.Errorf("gateway %s/%s: the infra bucket holds a %T, want a gatewire.bus.v1.Proxy", ns, gw, e.Value)
	}
	return proxy, nil
}
