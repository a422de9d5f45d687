#!/usr/bin/env bash
# proto.sh regenerates the Go code of proto/ with pinned generators:
# protoc from Debian's protobuf-compiler (installed when missing) and
# protoc-gen-go from the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
PROTOC_GEN_GO_VERSION=v1.36.12
BIN=${GATEWIRE_TOOLS:-$HOME/.cache/gatewire/tools}
mkdir -p "$BIN"
if ! command -v protoc >/dev/null; then
  echo "proto: installing protoc (Debian protobuf-compiler)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y -qq protobuf-compiler >&2
fi
if [ ! -x "$BIN/protoc-gen-go-$PROTOC_GEN_GO_VERSION" ]; then
  GOBIN="$BIN" GOWORK=off go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
  mv "$BIN/protoc-gen-go" "$BIN/protoc-gen-go-$PROTOC_GEN_GO_VERSION"
fi
OUT=$(realpath -m "${1:-proto}")
mkdir -p "$OUT"
cd proto
protoc --plugin=protoc-gen-go="$BIN/protoc-gen-go-$PROTOC_GEN_GO_VERSION" \
  --go_out="$OUT" --go_opt=paths=source_relative \
  $(find gatewire -name '*.proto' | sort)
