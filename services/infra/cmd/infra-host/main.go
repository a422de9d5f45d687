// Package main is the infra-host command: gatewire's infra service in host
// mode only (bootstrap files, and Envoy processes when
// GATEWIRE_INFRA_ENVOY_PATH names one), against an external NATS server.
// It is cmd/infra without the kubernetes mode and certgen, for hosts: it
// links neither client-go, controller-runtime nor the Kubernetes API types.
// Run it with -h to list its environment variables.
package main

import (
	"log/slog"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/services/infra"
)

func main() {
	var cfg infra.Config
	service.Main("infra", ":19004", &cfg, func(b *bus.Bus, log *slog.Logger) (service.Runner, error) {
		return infra.New(cfg, b, log)
	})
}
