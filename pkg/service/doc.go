// Package service runs one gatewire service: it loads its configuration from
// the environment, connects to NATS, opens the bus, serves the admin port and
// runs the service until the process is told to stop.
//
// Every service package (provider, translator, xds, infra) has the same
// shape: a Config loaded by envconfig with the GATEWIRE_ prefix, New(cfg,
// bus, logger) and a [Runner]. Each cmd/ main is one call to [Main].
//
// The admin port serves /healthz (the process is alive), /readyz (every
// runner has synced its input buckets), /metrics (Prometheus), and
// /debug/pprof only when GATEWIRE_ADMIN_PPROF=true.
//
// Each service connects to NATS as its own user (GATEWIRE_NATS_NKEY_SEED or
// GATEWIRE_NATS_CREDS, the roles of package natsauth), over TLS when
// GATEWIRE_NATS_TLS_CA is set; every file is checked at start. Without
// credentials it still runs, against a server that asks for none, and warns
// once.
package service
