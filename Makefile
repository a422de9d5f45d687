# gatewire: an Envoy control plane for the Kubernetes Gateway API on NATS JetStream.
# Everything here needs only the Go toolchain (and apt for protoc, installed when missing).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

MODULES := proto pkg services/provider services/translator services/xds services/infra cmd/gatewire integration
PKGS := $(addsuffix /...,$(addprefix ./,$(MODULES)))
UNIT_PKGS := $(filter-out ./integration/...,$(PKGS))
BIN := bin
GO_TEST_FLAGS ?=
BENCH_COUNT ?= 6
# The route counts of the propagation benchmark (real processes, cold start, edits, memory).
BENCH_SIZES ?= 300,1000,3000,10000
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da

# The version and commit stamped into every binary (package pkg/buildinfo).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILDINFO := github.com/gatewire/gatewire/pkg/buildinfo
LDFLAGS := -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)
# grpcnotrace leaves out gRPC's golang.org/x/net/trace, whose html/template
# would make the linker keep every exported method of every type: a third of
# each binary and of its resident memory (TestLinkerDropsUnusedMethods).
GO_TAGS := grpcnotrace
# Release builds: no local paths, no symbol table or DWARF, static.
GO_BUILD := CGO_ENABLED=0 go build -trimpath -tags '$(GO_TAGS)' -ldflags '$(LDFLAGS)'

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build gatewire and the four service binaries (the provider and infra also as provider-file and infra-host, their modes for hosts alone) into bin/: stripped, with $(VERSION) and $(COMMIT) stamped in.
	@mkdir -p $(BIN)
	$(GO_BUILD) -o $(BIN)/gatewire ./cmd/gatewire
	$(GO_BUILD) -o $(BIN)/provider ./services/provider/cmd/provider
	$(GO_BUILD) -o $(BIN)/provider-file ./services/provider/cmd/provider-file
	$(GO_BUILD) -o $(BIN)/translator ./services/translator/cmd/translator
	$(GO_BUILD) -o $(BIN)/xds ./services/xds/cmd/xds
	$(GO_BUILD) -o $(BIN)/infra ./services/infra/cmd/infra
	$(GO_BUILD) -o $(BIN)/infra-host ./services/infra/cmd/infra-host

.PHONY: run
run: ## Run gatewire standalone on examples/quickstart (xDS on :18000).
	@mkdir -p $(BIN)
	$(GO_BUILD) -o $(BIN)/gatewire ./cmd/gatewire
	$(BIN)/gatewire standalone -dir examples/quickstart

.PHONY: test
test: proto-check lint ## Run every test with the race detector (unit, then integration over real processes).
	export KUBEBUILDER_ASSETS="$${KUBEBUILDER_ASSETS:-$$(./hack/envtest-assets.sh)}"; \
	go test -race -count=1 $(GO_TEST_FLAGS) $(UNIT_PKGS) && \
	go test -race -count=1 -timeout 30m $(GO_TEST_FLAGS) ./integration/...

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver and etcd for envtest into ~/.cache/gatewire/envtest (once; 20-30 min cold).
	./hack/envtest-assets.sh

FUZZTIME ?= 30s
# Each fuzz target and its package; go test -fuzz takes one package at a time.
FUZZ_TARGETS := FuzzDecodeValue:./pkg/bus FuzzApply:./services/translator/resources \
	FuzzDecode:./pkg/manifest FuzzDiscoveryRequest:./services/xds FuzzTranslate:./services/translator \
	FuzzObjectJSON:./services/provider/file FuzzFastYAML:./cmd/gatewire FuzzParseFast:./pkg/manifest \
	FuzzWire:./services/translator/xdsgen FuzzVhostWire:./services/translator/xdsgen FuzzSyntax:./services/translator/gatewayapi

.PHONY: fuzz
fuzz: ## Run each fuzz target (bus codec, Resource objects, manifests, the fast YAML reader, xDS requests, translation, the wire encoders of xDS resources, the syntaxes of paths, header names and hostnames, published object JSON, printed YAML) for $(FUZZTIME); crashers land in the package's testdata/fuzz.
	for t in $(FUZZ_TARGETS); do \
		go test -run '^$$' -fuzz "^$${t%%:*}\$$" -fuzztime $(FUZZTIME) "$${t#*:}" || exit 1; \
	done

.PHONY: bench
bench: ## Run the benchmarks (translation of 100 to 10,000 HTTPRoutes, one route edit at 300 to 10,000, endpoint updates, `gatewire translate` on 1,000 routes, decoding a route's and its backends' manifests, a batch of 1,000 writes to the bus, scale-out over 1 and 2 translators, standalone memory and propagation with 1,000 routes, idle memory per process on the quickstart, xDS fan-out of one edit to 1,000 and 5,000 streams, propagation over real processes at BENCH_SIZES routes (300 to 10,000): cold start, snapshots, edit p50/p90/p99, memory per process; `gatewire translate` on 10,000 routes) and print their medians.
	@mkdir -p $(BIN)
	go test -run '^$$' -bench 'Translate|EndpointChange|RouteEdit' -benchmem -count $(BENCH_COUNT) ./services/translator/ | tee $(BIN)/bench.txt
	go test -run '^$$' -bench TranslateCommand -benchmem -count $(BENCH_COUNT) ./cmd/gatewire/ | tee -a $(BIN)/bench.txt
	go test -run '^$$' -bench 'Decode$$' -benchmem -count $(BENCH_COUNT) ./pkg/manifest/ | tee -a $(BIN)/bench.txt
	go test -run '^$$' -bench 'BatchPut$$' -benchmem -count $(BENCH_COUNT) ./pkg/bus/ | tee -a $(BIN)/bench.txt
	go test -run '^$$' -bench ScaleOut -benchtime 1x -count $(BENCH_COUNT) -timeout 60m ./services/translator/ | tee -a $(BIN)/bench.txt
	go test -run '^$$' -bench 'StandaloneFootprint|Idle' -benchtime 1x -count $(BENCH_COUNT) -timeout 60m ./integration/ | tee -a $(BIN)/bench.txt
	go test -run '^$$' -bench FanOut -benchtime 1x -count 1 -timeout 30m ./services/xds/ | tee -a $(BIN)/bench.txt
	BENCH_SIZES=$(BENCH_SIZES) go test -run '^$$' -bench 'Propagation|TranslateProcess' -benchtime 1x -count 1 -timeout 120m ./integration/ | tee -a $(BIN)/bench.txt
	GOWORK=off go run golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION) $(BIN)/bench.txt

IMAGE_REPO ?= ghcr.io/gatewire
IMAGE_TAG ?= $(VERSION)
SERVICES := provider translator xds infra

.PHONY: images
images: ## Build the image of each service, $(IMAGE_REPO)/<service>:$(IMAGE_TAG) (needs a Docker engine).
	for s in $(SERVICES); do \
		docker build -f services/$$s/Dockerfile --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) \
			-t $(IMAGE_REPO)/$$s:$(IMAGE_TAG) . ; \
	done

.PHONY: manifests
manifests: ## Tag gatewire's images in deploy/k8s/base with $(VERSION), the tag that make images gives them.
	sed -i -E '/name: ghcr\.io\/gatewire\//{n;s/newTag: .*/newTag: $(VERSION)/;}' deploy/k8s/base/kustomization.yaml

.PHONY: proto
proto: ## Regenerate the Go code of proto/ with the pinned generators.
	./hack/proto.sh

.PHONY: proto-check
proto-check: ## Fail when the committed generated code differs from what 'make proto' makes.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	./hack/proto.sh "$$tmp"; \
	if ! diff -r -x '*.proto' -x go.mod -x go.sum "$$tmp/gatewire" proto/gatewire >/dev/null; then \
		diff -r -x '*.proto' "$$tmp/gatewire" proto/gatewire | head -20; \
		echo "proto/: generated code is stale; run 'make proto' and commit the result" >&2; exit 1; \
	fi

.PHONY: lint
lint: ## go vet every module and check gofmt.
	go vet $(PKGS)
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt would change:" >&2; echo "$$out" >&2; exit 1; fi

.PHONY: fmt
fmt: ## Format the code.
	gofmt -w $(MODULES)

.PHONY: clean
clean: ## Remove build outputs and standalone state.
	rm -rf $(BIN) .gatewire
