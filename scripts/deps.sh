#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 machine and prints the
# environment the tests read (LLAMA_SERVER, LLAMA_MODEL, LLAMA_MODEL_D768, CHROMIUM) as `export` lines:
#   eval "$(scripts/deps.sh)"
# Slow builds (llama.cpp) are cached outside the clone by .ci/llama.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "deps: $*" >&2; }

need_apt=()
for pair in cmake:cmake ninja:ninja-build g++:g++ git:git chromium:chromium pdftotext:poppler-utils /usr/bin/time:time; do
  cmd=${pair%%:*} pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    log "missing packages: ${need_apt[*]} (run as root, or: sudo apt-get install ${need_apt[*]})"; exit 1
  fi
  log "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq "${need_apt[@]}" >&2
fi

if [ ! -d "$ROOT/scripts/duckdb/node_modules/@duckdb/node-api" ]; then
  log "npm ci (DuckDB for the cross-checks)"
  npm ci --prefix "$ROOT/scripts/duckdb" --no-audit --no-fund --silent >&2
fi

# staticcheck, pinned, built once into the cache (it is a Go module, fetched by the go command).
STATICCHECK_VERSION=v0.8.2
SC="${CEILING_CACHE:-$HOME/.cache/ceiling}/staticcheck-$STATICCHECK_VERSION"
if [ ! -x "$SC/staticcheck" ]; then
  log "go install staticcheck@$STATICCHECK_VERSION"
  GOBIN="$SC" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" >&2
fi

server=$("$ROOT/.ci/llama.sh" build)
model=$("$ROOT/.ci/llama.sh" model d64)
# The d768 model is made here too: the tests that serve it never build anything.
model768=$("$ROOT/.ci/llama.sh" model d768)
echo "export LLAMA_SERVER='$server'"
echo "export LLAMA_MODEL='$model'"
echo "export LLAMA_MODEL_D768='$model768'"
echo "export CHROMIUM='$(command -v chromium)'"
echo "export STATICCHECK='$SC/staticcheck'"
