// Package main is the infra command: it runs gatewire's infra service against an external NATS server.
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
