module github.com/gatewire/gatewire/pkg

go 1.26.0

replace (
	github.com/gatewire/gatewire/pkg => ../pkg
	github.com/gatewire/gatewire/proto => ../proto
	github.com/gatewire/gatewire/services/infra => ../services/infra
	github.com/gatewire/gatewire/services/provider => ../services/provider
	github.com/gatewire/gatewire/services/translator => ../services/translator
	github.com/gatewire/gatewire/services/xds => ../services/xds
)

require (
	github.com/gatewire/gatewire/proto v0.0.0-00010101000000-000000000000
	github.com/klauspost/compress v1.20.4
	github.com/nats-io/nats-server/v2 v2.15.3
	github.com/nats-io/nats.go v1.55.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/antithesishq/antithesis-sdk-go v0.9.0-default-no-op // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/minio/highwayhash v1.0.4 // indirect
	github.com/nats-io/jwt/v2 v2.8.3 // indirect
	github.com/nats-io/nkeys v0.4.17 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)
