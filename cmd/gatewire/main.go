// Package main is gatewire, the project's one command-line tool.
//
//	gatewire standalone               embedded NATS and all four services in one process
//	gatewire status [ns/gateway]      what the bus holds of each gateway
//	gatewire proxy-status [ns/gw]     the connected Envoys and whether each holds its gateway's config
//	gatewire config-dump ns/gateway   what the gateway's Envoys are served, as Envoy's /config_dump
//	gatewire bootstrap ns/gateway     the Envoy bootstrap the infra service writes for the gateway
//	gatewire tap [bucket] [keys]      print every change on the bus, decoded
//	gatewire translate -f FILE...     translate manifests offline: status, IR or xDS
//	gatewire nats-config -out DIR     the NATS users (nkeys, nats.conf accounts) and TLS files of an installation
//	gatewire certgen                  the CA, the xds and NATS certificates and the NATS users, as Kubernetes Secrets
//	gatewire version
//
// Every subcommand answers -h with its flags and environment variables.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/gatewire/gatewire/pkg/buildinfo"
	"github.com/gatewire/gatewire/services/infra/certgen"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
}

var commands = []command{
	{"standalone", "run an embedded NATS server and the four services in one process", runStandalone},
	{"status", "print what the bus holds of each gateway: conditions, xDS snapshot, rejections, addresses", runStatus},
	{"proxy-status", "print every connected Envoy and proxyless client and whether it holds its gateway's config", runProxyStatus},
	{"config-dump", "print what a gateway's Envoys are served, shaped as Envoy's /config_dump", runConfigDump},
	{"bootstrap", "print the Envoy bootstrap the infra service writes for a gateway", runBootstrap},
	{"tap", "print every change on the bus, decoded", runTap},
	{"translate", "translate Gateway API manifests offline: status, IR or xDS", runTranslate},
	{"nats-config", "write the NATS users of an installation (nkeys, nats.conf accounts) and, with -tls, its certificates", runNATSConfig},
	{"certgen", "write the CA, the xds and NATS certificates and the NATS users as Kubernetes Secrets", func(ctx context.Context, args []string, w io.Writer) error {
		return certgen.Main(ctx, args, w)
	}},
	{"version", "print the version and the commit it was built from", runVersion},
}

func runVersion(_ context.Context, _ []string, w io.Writer) error {
	_, err := fmt.Fprintf(w, "gatewire %s (commit %s, %s)\n", buildinfo.Version(), buildinfo.Commit(), runtime.Version())
	return err
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "gatewire: an Envoy control plane for the Kubernetes Gateway API, on NATS JetStream.")
	fmt.Fprintln(w, "\nUsage: gatewire <command> [flags]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'gatewire <command> -h' for the flags of a command.")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage(os.Stdout)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for _, c := range commands {
		if c.name != os.Args[1] {
			continue
		}
		err := c.run(ctx, os.Args[2:], os.Stdout)
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return
		case errors.Is(err, errUsage):
			fmt.Fprintf(os.Stderr, "gatewire %s: %v\n", c.name, err)
			os.Exit(2)
		default:
			fmt.Fprintf(os.Stderr, "gatewire %s: %v\n", c.name, err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "gatewire: unknown command %q\n\n", os.Args[1])
	usage(os.Stderr)
	os.Exit(2)
}

// errUsage marks errors in the command line or the environment.
var errUsage = errors.New("usage")

func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}
