// Package main is the provider command: it runs gatewire's provider service against an external NATS server,
// in either mode (GATEWIRE_PROVIDER_MODE: file or kubernetes). Run it with -h to list its environment variables.
// cmd/provider-file is the same service with the file mode only, for hosts.
package main

import (
	"log/slog"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/service"
	"github.com/gatewire/gatewire/services/provider"
	"github.com/gatewire/gatewire/services/provider/kube"
)

func main() {
	var cfg provider.Config
	service.Main("provider", ":19001", &cfg, func(b *bus.Bus, log *slog.Logger) (service.Runner, error) {
		return provider.New(cfg, b, log, provider.WithKubernetes(kube.Mode))
	})
}
