// Package main is the translator command: it runs gatewire's translator service against an external NATS server.
// Run it with -h to list its environment variables.
package main

import (
	"log/slog"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/services/translator"
)

func main() {
	var cfg translator.Config
	service.Main("translator", ":19002", &cfg, func(b *bus.Bus, log *slog.Logger) (service.Runner, error) {
		return translator.New(cfg, b, log)
	})
}
