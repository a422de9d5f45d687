// Package integration tests gatewire end to end: the service binaries and a
// real nats-server run as separate processes, and real xDS clients check
// what Envoy would be served.
package integration
