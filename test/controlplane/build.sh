#!/usr/bin/env bash
# Builds the local Kubernetes control plane into BIN_DIR from pinned Go modules:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok.
# With the argument "keda", builds KEDA's operator instead (the scale-from-zero
# tests run it against the test API server; make test needs it, make run not).
# A binary already built at the pinned version is kept.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${BIN_DIR:-$(cd "$here/../.." && pwd)/bin}
mkdir -p "$bin"

KUBE_VERSION=v1.37.2
ETCD_VERSION=v3.6.5
KWOK_VERSION=v0.8.0
# KEDA v2.20.2: the newest release whose module builds with the Go of this
# project (v2.21 requires Go 1.27).
KEDA_VERSION=v2.20.2

log() { printf '[controlplane %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# has_module_version BINARY MODULE VERSION: the binary's build info records
# MODULE at VERSION, directly or through a replace ("=>") line.
has_module_version() {
  [ -x "$1" ] && go version -m "$1" 2>/dev/null | awk -v m="$2" -v v="$3" '($1=="dep"||$1=="mod"||$1=="=>") && $2==m && $3==v {found=1} END {exit !found}'
}

# kube_module is the module whose version identifies a Kubernetes binary:
# kubectl is built from the k8s.io/kubectl staging module, the rest from
# k8s.io/kubernetes.
kube_module() {
  if [ "$1" = kubectl ]; then echo "k8s.io/kubectl ${KUBE_VERSION/v1./v0.}"; else echo "k8s.io/kubernetes $KUBE_VERSION"; fi
}

build_etcd() {
  if has_module_version "$bin/etcd" go.etcd.io/etcd/server/v3 "$ETCD_VERSION"; then
    log "etcd $ETCD_VERSION: up to date"; return
  fi
  log "etcd $ETCD_VERSION: building (about 2 minutes from scratch)"
  (cd "$here/etcd" && go build -trimpath -o "$bin/etcd" .)
  log "etcd $ETCD_VERSION: built"
}

build_kube() {
  local missing=()
  for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    if has_module_version "$bin/$b" $(kube_module "$b"); then
      log "$b $KUBE_VERSION: up to date"
    else
      missing+=("./cmd/$b")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return
  local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
  local ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  log "building ${missing[*]} at $KUBE_VERSION (15-20 minutes from scratch on 2 cores; go build prints each package as it compiles)"
  # go build -v names each package it compiles: show every 100th as progress,
  # and every other line (compiler errors) as it is.
  (cd "$here/kube" && go build -v -trimpath -ldflags "$ldflags" -o "$bin/" "${missing[@]}" 2>&1 |
    awk '/^[a-z0-9.-]+(\/[^ ]+)?$/ {n++; if (n%100==0) {printf "[controlplane] %d packages compiled, now %s\n", n, $0; fflush()}; next} {print; fflush()}')
  for b in "${missing[@]}"; do
    [ -x "$bin/$(basename "$b")" ] || { log "build of $b failed"; exit 1; }
  done
  log "kubernetes $KUBE_VERSION binaries: built"
}

build_kwok() {
  if has_module_version "$bin/kwok" sigs.k8s.io/kwok "$KWOK_VERSION"; then
    log "kwok $KWOK_VERSION: up to date"; return
  fi
  log "kwok $KWOK_VERSION: building (about 2-3 minutes from scratch)"
  GOBIN="$bin" go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  log "kwok $KWOK_VERSION: built"
}

# build_keda builds KEDA's operator from its module's source: its go.mod
# pins Kubernetes through replace directives, which only hold when it is
# the main module, so it is built in a copy of that source (go install
# module@version refuses modules with replaces). The version is recorded
# beside it, the build info naming a main module "(devel)".
build_keda() {
  if [ -x "$bin/keda-operator" ] && [ "$(cat "$bin/keda-operator.version" 2>/dev/null)" = "$KEDA_VERSION" ]; then
    log "keda-operator $KEDA_VERSION: up to date"; return
  fi
  log "keda-operator $KEDA_VERSION: building (about 10-15 minutes from scratch on 2 cores)"
  local src tmp
  src=$(cd "${TMPDIR:-/tmp}" && GOFLAGS= go mod download -json "github.com/kedacore/keda/v2@$KEDA_VERSION" | awk -F'"' '$2=="Dir" {print $4}')
  [ -d "$src" ] || { log "download of github.com/kedacore/keda/v2@$KEDA_VERSION failed"; exit 1; }
  tmp=$(mktemp -d)
  cp -r "$src/." "$tmp" && chmod -R u+w "$tmp"
  (cd "$tmp" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$bin/keda-operator" ./cmd/operator)
  rm -rf "$tmp"
  echo "$KEDA_VERSION" > "$bin/keda-operator.version"
  log "keda-operator $KEDA_VERSION: built"
}

start=$(date +%s)
if [ "${1:-}" = keda ]; then
  build_keda
  exit 0
fi
build_etcd
build_kube
build_kwok
log "control plane ready in $bin ($(( $(date +%s) - start ))s)"
