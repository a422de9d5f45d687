// Package service runs one gatewire service: it loads its configuration from
// the environment, connects to NATS, opens the bus, serves the admin port and
// runs the service until the process is told to stop.
//
// Every service package (provider, translator, xds, infra) has the same
// shape: a Config loaded by envconfig with the GATEWIRE_ prefix, New(cfg,
// bus, logger) and a [Runner]. Each cmd/ main is one call to [Main].
//
// The admin port serves /healthz (the process is alive), /readyz (every
// runner has synced its input buckets), /metrics (Prometheus) and
// /debug/pprof.
package service
