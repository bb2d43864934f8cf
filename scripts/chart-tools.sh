#!/usr/bin/env bash
# Builds the chart tools from source through the Go module proxy (no binary downloads) into the repo-local,
# git-ignored .tools/, and makes kubeconform's Kubernetes schemas from the k8s.io/kubernetes module's OpenAPI
# document. Idempotent: a tool already built at its pinned version is kept (a marker file records it).
# The first run compiles helm (minutes); later runs take a second. Go's module and build caches
# (~/go/pkg/mod, ~/.cache/go-build) make a rebuild after `rm -rf .tools` quick too.
#
# Prints nothing but progress; the paths are fixed: .tools/bin/{helm,kubeconform}, .tools/schemas/<k8s>/.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.8.0
K8S_VERSION=v1.34.4

TOOLS="$PWD/.tools"
mkdir -p "$TOOLS/bin"
command -v go >/dev/null || { echo "chart-tools: go is required" >&2; exit 1; }

# build <name> <package> <version>: `go install` into .tools/bin unless the marker says it is there already.
build() {
  local name=$1 pkg=$2 version=$3 marker="$TOOLS/bin/.$1.version"
  if [[ -x "$TOOLS/bin/$name" && -f "$marker" && "$(cat "$marker")" == "$pkg@$version" ]]; then return; fi
  echo "chart-tools: building $name $version from the Go module proxy"
  # GOFLAGS reset: a caller's -mod=vendor or similar must not leak into a pkg@version install.
  GOBIN="$TOOLS/bin" GOFLAGS=-mod=mod go install "$pkg@$version"
  echo "$pkg@$version" >"$marker"
}

build helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
build kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"

# Kubernetes' OpenAPI v2 document rides in the k8s.io/kubernetes module zip (api/openapi-spec/swagger.json);
# `go mod download` fetches and verifies it (go.sum database) without building anything.
SCHEMAS="$TOOLS/schemas/$K8S_VERSION"
if [[ ! -f "$SCHEMAS/.complete" ]]; then
  echo "chart-tools: making Kubernetes $K8S_VERSION schemas from the k8s.io/kubernetes module"
  dir=$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);if(j.Error)throw new Error(j.Error);process.stdout.write(j.Dir)})')
  rm -rf "$SCHEMAS"
  node scripts/k8s-schemas.mjs "$dir/api/openapi-spec/swagger.json" "$SCHEMAS"
  touch "$SCHEMAS/.complete"
fi
