#!/usr/bin/env bash
# Re-records the second bundled sample: a real llama.cpp server whose 8 slots share
# one KV cache (--kv-unified, -c 1024) that holds only ~5 of the sweep's requests
# (128-token prompts + 64-token outputs), swept by `ceiling record` at concurrency
# 1,2,4,6,8. The model is the tiny d64 test model (the d768 one is too slow for a
# loaded 2-core machine): the KV cache, not the arithmetic, is what this sample shows. Past the cache the server fails requests with "Context size has been
# exceeded.", and the recorder stops the sweep at the first level where every
# request failed (exit 1, the trace kept): that is the evidence this sample carries.
# Usage: scripts/record-sample-unified.sh [OUT.parquet]
#   (default samples/llamacpp-d64-unified-8slots.parquet)
# The server is started here on 127.0.0.1 and stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/samples/llamacpp-d64-unified-8slots.parquet}
REQUESTS=${REQUESTS:-96}
PORT=${PORT:-18472}
server=$("$ROOT/.ci/llama.sh" build)
model=$("$ROOT/.ci/llama.sh" model d64)
log=$(mktemp)
"$server" -m "$model" --host 127.0.0.1 --port "$PORT" -a tiny-d64 -np 8 -c 1024 --kv-unified --metrics \
  --no-webui -t 2 --no-jinja --chat-template chatml --override-kv llama.context_length=int:2048 \
  >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.2
done
cd "$ROOT"
rc=0
go run ./cmd/ceiling record --url "http://127.0.0.1:$PORT" --concurrency 1,2,4,6,8 \
  --requests-per-level "$REQUESTS" --warmup 2 --prompt-tokens 128 --output-tokens 64 --ignore-eos \
  --notes "llama.cpp (node-llama-cpp 3.21.1 source), random-weight d64 model, 8 slots sharing one 1024-token KV cache (--kv-unified), CPU-only 2-core machine" \
  -o "$OUT" || rc=$?
# Exit 1 is the expected stop at a level the full cache failed entirely.
if [ "$rc" -ne 0 ] && { [ "$rc" -ne 1 ] || [ ! -f "$OUT" ]; }; then exit "$rc"; fi
