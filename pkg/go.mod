module github.com/gatewire/gatewire/pkg

go 1.26.0

replace (
	github.com/gatewire/gatewire/proto => ../proto
	github.com/gatewire/gatewire/pkg => ../pkg
	github.com/gatewire/gatewire/services/provider => ../services/provider
	github.com/gatewire/gatewire/services/translator => ../services/translator
	github.com/gatewire/gatewire/services/xds => ../services/xds
	github.com/gatewire/gatewire/services/infra => ../services/infra
)
