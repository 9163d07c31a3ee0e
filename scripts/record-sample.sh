#!/usr/bin/env bash
# Re-records the bundled sample: a real llama.cpp server on this CPU-only machine
# (random-weight d768 model, 4 slots, -c 8192), swept by `ceiling record` at
# concurrency 1,2,4,8,16 with 256-token prompts and 128-token outputs.
# Usage: scripts/record-sample.sh [OUT.parquet]   (default samples/llamacpp-d768-4slots.parquet)
# The server is started here on 127.0.0.1 and stopped by PID on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/samples/llamacpp-d768-4slots.parquet}
REQUESTS=${REQUESTS:-48}
PORT=${PORT:-18471}
server=$("$ROOT/.ci/llama.sh" build)
model=$("$ROOT/.ci/llama.sh" model d768)
log=$(mktemp)
"$server" -m "$model" --host 127.0.0.1 --port "$PORT" -a tiny-d768 -np 4 -c 8192 --metrics \
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
go run ./cmd/ceiling record --url "http://127.0.0.1:$PORT" --concurrency 1,2,4,8,16 \
  --requests-per-level "$REQUESTS" --warmup 2 --prompt-tokens 256 --output-tokens 128 --ignore-eos \
  --notes "llama.cpp (node-llama-cpp 3.21.1 source), random-weight d768 model, 4 slots, -c 8192, CPU-only 2-core machine" \
  -o "$OUT"
