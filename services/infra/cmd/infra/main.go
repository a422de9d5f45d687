// Package main is the infra command: it runs gatewire's infra service against an external NATS server,
// in either mode (GATEWIRE_INFRA_MODE: host or kubernetes). Run it with -h to list its environment
// variables; `infra certgen` writes the Secrets gatewire needs before it starts (see package certgen),
// the Job of deploy/k8s. cmd/infra-host is the same service with the host mode only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/services/infra"
	"github.com/gatewire/gatewire/services/infra/certgen"
	"github.com/gatewire/gatewire/services/infra/kube"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "certgen" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		err := certgen.Main(ctx, os.Args[2:], os.Stderr)
		stop()
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "infra certgen:", err)
			os.Exit(1)
		}
		return
	}
	var cfg infra.Config
	service.Main("infra", ":19004", &cfg, func(b *bus.Bus, log *slog.Logger) (service.Runner, error) {
		return infra.New(cfg, b, log, infra.WithKubernetes(kube.Connect(nil)))
	})
}
