#!/usr/bin/env bash
# Builds and caches a real llama.cpp llama-server (CPU) and tiny random-weight models
# for the end-to-end tests and the bundled sample. Nothing here is downloaded but
# registry packages: the llama.cpp source comes from the npm package node-llama-cpp,
# which ships it as a git bundle.
#
#   .ci/llama.sh build            build llama-server once (cached), print its path
#   .ci/llama.sh model d64|d768   make a random-weight GGUF once (cached), print its path
#                                 (and, on stderr, the llama-server flags it needs)
#   .ci/llama.sh flags d64|d768   print the llama-server command line that serves it
#
# The cache lives outside the clone ($CEILING_CACHE, default ~/.cache/ceiling), keyed by
# the node-llama-cpp version and the CPU (GGML_NATIVE ties the binary to the CPU it was
# built on).
set -euo pipefail
NLC_VERSION=3.21.1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CEILING_CACHE:-$HOME/.cache/ceiling}
CPU_KEY=$( (grep -m1 '^model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo) | sha256sum | cut -c1-12)
W="$CACHE/llama.cpp-$NLC_VERSION-$CPU_KEY"
BIN="$W/llama.cpp/build/bin"

log() { echo "llama.sh: $*" >&2; }

build() {
  if [ -x "$BIN/llama-server" ] && [ -x "$BIN/llama-convert-llama2c-to-ggml" ]; then
    echo "$BIN/llama-server"; return
  fi
  mkdir -p "$W"
  # One build at a time: a second caller waits for the first instead of racing it.
  exec 9>"$W/.build.lock"
  flock 9
  if [ -x "$BIN/llama-server" ] && [ -x "$BIN/llama-convert-llama2c-to-ggml" ]; then
    echo "$BIN/llama-server"; return
  fi
  for tool in cmake ninja g++ git npm; do
    command -v "$tool" >/dev/null || { log "$tool is missing (apt-get install cmake ninja-build g++ git; npm comes with Node.js)"; exit 1; }
  done
  local t0; t0=$(date +%s)
  if [ ! -d "$W/llama.cpp/.git" ]; then
    log "fetching llama.cpp source from node-llama-cpp@$NLC_VERSION"
    local tmp; tmp=$(mktemp -d)
    (cd "$tmp" && npm pack "node-llama-cpp@$NLC_VERSION" --silent >/dev/null &&
      tar xzf "node-llama-cpp-$NLC_VERSION.tgz" package/llama/gitRelease.bundle &&
      rm -rf "$W/llama.cpp" && git -c advice.detachedHead=false clone -q package/llama/gitRelease.bundle "$W/llama.cpp")
    rm -rf "$tmp"
  fi
  log "building llama-server (several minutes on 2 cores; log in $W/build.log)"
  cmake -S "$W/llama.cpp" -B "$W/llama.cpp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF >"$W/cmake.log" 2>&1 ||
    { tail -20 "$W/cmake.log" >&2; exit 1; }
  ninja -C "$W/llama.cpp/build" -j"$(nproc)" llama-server llama-convert-llama2c-to-ggml >"$W/build.log" 2>&1 ||
    { tail -20 "$W/build.log" >&2; exit 1; }
  log "built in $(( $(date +%s) - t0 ))s"
  echo "$BIN/llama-server"
}

# model NAME: d64 is the fast test model (dim 64, 2 layers); d768 batches like a
# memory-bound GPU (dim 768, 6 layers), so its throughput bends at the slot limit.
model() {
  local name=$1 args
  case "$name" in
    d64) args="-dim 64 -hidden 192 -layers 2 -heads 4 -kv-heads 4" ;;
    d768) args="-dim 768 -hidden 2048 -layers 6 -heads 12 -kv-heads 12" ;;
    *) log "unknown model $name (want d64 or d768)"; exit 2 ;;
  esac
  local out="$W/tiny-$name.gguf"
  if [ ! -s "$out" ]; then
    build >/dev/null
    exec 8>"$W/.model-$name.lock"
    flock 8
  fi
  if [ ! -s "$out" ]; then
    log "writing random-weight model $name"
    # shellcheck disable=SC2086
    (cd "$ROOT" && go run ./.ci/llama2c -o "$W/$name.bin" $args -vocab 32000 -seq-len 2048 -seed 42)
    "$BIN/llama-convert-llama2c-to-ggml" --copy-vocab-from-model "$W/llama.cpp/models/ggml-vocab-llama-spm.gguf" \
      --llama2c-model "$W/$name.bin" --llama2c-output-model "$out.tmp" >"$W/convert-$name.log" 2>&1 ||
      { tail -20 "$W/convert-$name.log" >&2; exit 1; }
    rm -f "$W/$name.bin"
    mv "$out.tmp" "$out"
  fi
  log "serve it with: $(flags_for "$out")"
  echo "$out"
}

# flags_for PATH: the llama-server command line the tiny models need. Their GGUF says
# no context length and has no chat template, so llama-server needs both spelled
# out; 4 slots share 8,192 tokens (2,048 each), as the sample was recorded
# (samples/README.md).
flags_for() {
  echo "$BIN/llama-server -m $1 -np 4 -c 8192 --metrics --no-jinja --chat-template chatml --override-kv llama.context_length=int:2048 --host 127.0.0.1 --port 8080"
}

case "${1:-}" in
  build) build ;;
  model) model "${2:?model name}" ;;
  flags) flags_for "$(model "${2:?model name}")" ;;
  *) echo "usage: $0 build | model d64|d768 | flags d64|d768" >&2; exit 2 ;;
esac
