// Package main is the xds command: it runs gatewire's xds service against an external NATS server.
// Run it with -h to list its environment variables.
package main

import (
	"log/slog"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/services/xds"
)

func main() {
	var cfg xds.Config
	service.Main("xds", ":19003", &cfg, func(b *bus.Bus, log *slog.Logger) (service.Runner, error) {
		return xds.New(cfg, b, log)
	})
}
