#!/usr/bin/env bash
# envtest-assets.sh [cache-dir]
#
# Builds the kube-apiserver and etcd that controller-runtime's envtest runs,
# from source through the Go module proxy, into <cache-dir>/<versions>/, and
# prints that folder (use it as KUBEBUILDER_ASSETS). A finished folder is
# reused without building or downloading anything.
#
#   K8S_VERSION   (1.37.2)  k8s.io/kubernetes; its staging modules are v0.<minor>.<patch>
#   ETCD_VERSION  (3.7.0)   go.etcd.io/etcd/server/v3
#
# The first build takes 20-30 minutes and 2.5 GB of memory on 2 cores.
set -euo pipefail

CACHE=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/gatewire/envtest}
K8S_VERSION=${K8S_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.7.0}

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
ASSETS="$CACHE/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
if [ -f "$ASSETS/.complete" ]; then echo "$ASSETS"; exit 0; fi

say() { echo "envtest-assets: $*" >&2; }
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0
STAGING="v0.${K8S_VERSION#1.}"
MINOR=$(echo "$K8S_VERSION" | cut -d. -f2)
WORK="$CACHE/.build"
OUT="$ASSETS.partial"
rm -rf "$OUT"
mkdir -p "$OUT" "$WORK/kube" "$WORK/etcd"

# kube-apiserver: a throwaway module that requires k8s.io/kubernetes, with a
# replace for every staging module it requires at v0.0.0.
cd "$WORK/kube"
rm -f go.mod go.sum
printf 'module envtestassets/kube\n\ngo 1.26.0\n' > go.mod
printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' > tools.go
go mod edit -require="k8s.io/kubernetes@v${K8S_VERSION}"
gomod=$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
[ -f "$gomod" ] || { say "cannot download k8s.io/kubernetes@v${K8S_VERSION}"; exit 1; }
for m in $(sed -n '/^require (/,/^)/p' "$gomod" | awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}'); do
  go mod edit -replace="${m}=${m}@${STAGING}"
done
say "resolving k8s.io/kubernetes v${K8S_VERSION}"
go mod tidy
v=k8s.io/component-base/version
flags="-s -w -X $v.gitVersion=v${K8S_VERSION} -X $v.gitMajor=1 -X $v.gitMinor=${MINOR} -X $v.gitTreeState=clean"
say "building kube-apiserver v${K8S_VERSION} (first time: 20-30 min)"
go build -trimpath -buildvcs=false -ldflags "$flags" -o "$OUT/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver

cd "$WORK/etcd"
rm -f go.mod go.sum
printf 'module envtestassets/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" > go.mod
printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3/etcdmain"\n' > tools.go
go mod tidy
say "building etcd v${ETCD_VERSION}"
go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$OUT/etcd" go.etcd.io/etcd/server/v3

"$OUT/kube-apiserver" --version >&2
"$OUT/etcd" --version >&2
touch "$OUT/.complete"
rm -rf "$ASSETS"
mv "$OUT" "$ASSETS"
echo "$ASSETS"
