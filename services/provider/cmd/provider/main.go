// Package main is the provider command: it runs gatewire's provider service against an external NATS server.
// Run it with -h to list its environment variables.
package main

import (
	"log/slog"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/services/provider"
)

func main() {
	var cfg provider.Config
	service.Main("provider", ":19001", &cfg, func(b *bus.Bus, log *slog.Logger) (service.Runner, error) {
		return provider.New(cfg, b, log)
	})
}
