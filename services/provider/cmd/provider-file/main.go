// Package main is the provider-file command: gatewire's provider service in
// file mode only, against an external NATS server. It is cmd/provider without
// the kubernetes mode, for hosts: it links neither client-go nor
// controller-runtime, so its binary is a third smaller and it starts with
// 12 MiB less resident. Run it with -h to list its environment variables.
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
