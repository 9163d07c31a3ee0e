#!/usr/bin/env bash
# bench-analyze.sh: wall time and peak memory of `ceiling analyze --format json` on a
# large generated trace (default 1,000,000 requests × 100 chunks = 99M chunk gaps),
# beside DuckDB computing the per-level TTFT and ITL percentiles from the same file.
# Target: ceiling within 2× DuckDB's wall time and at or below its peak memory.
#
#   scripts/bench-analyze.sh [TRACE] [REQUESTS] [CHUNKS]
#
# Needs GNU time (/usr/bin/time; Debian package `time`) and node with
# `npm install --prefix scripts/duckdb` done. DUCKDB_THREADS sets DuckDB's threads
# (default 2); GOMAXPROCS does the same for ceiling.
set -euo pipefail
cd "$(dirname "$0")/.."

trace=${1:-/tmp/ceiling-bench-1m.parquet}
requests=${2:-1000000}
chunks=${3:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

[ -x /usr/bin/time ] || { echo "bench-analyze: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
[ -d scripts/duckdb/node_modules/@duckdb ] || npm install --prefix scripts/duckdb >/dev/null

if [ ! -s "$trace" ]; then
	echo "generating $trace ($requests requests × $chunks chunks)..." >&2
	go run ./analyze/internal/gentrace/cmd -o "$trace" -requests "$requests" -chunks "$chunks"
fi
go build -o "$work/ceiling" ./cmd/ceiling

# measure NAME CMD...: runs CMD under GNU time, prints "NAME wall_s peak_rss_kib".
measure() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$work/$name.time" "$@" >"$work/$name.out"
	echo "$name $(cat "$work/$name.time")"
}

# What both engines compute: per level, over successful non-warm-up requests, the
# count, mean and p50/p90/p95/p99 (linear interpolation) of TTFT and of the pooled ITL.
sql="
WITH ok AS (SELECT * FROM read_parquet('$trace')
            WHERE NOT warmup AND status BETWEEN 200 AND 299 AND error IS NULL AND first_token_ns IS NOT NULL)
SELECT level, 'ttft' AS metric, count(*) AS n, avg(v) AS mean, quantile_cont(v, [0.5, 0.9, 0.95, 0.99]) AS q
  FROM (SELECT level, (first_token_ns - sent_ns) / 1e9 AS v FROM ok) GROUP BY level
UNION ALL
SELECT level, 'itl', count(*), avg(g) / 1e6, list_transform(quantile_cont(g, [0.5, 0.9, 0.95, 0.99]), x -> x / 1e6)
  FROM (SELECT level, unnest(chunk_gaps_us) AS g FROM ok) GROUP BY level
ORDER BY level, metric"

ls -l "$trace" >&2
c=$(measure ceiling "$work/ceiling" analyze "$trace" --format json)
d=$(measure duckdb node scripts/duckdb/query.mjs "$sql")
echo "$c"
echo "$d"
read -r _ cw cm <<<"$c"
read -r _ dw dm <<<"$d"
awk -v cw="$cw" -v cm="$cm" -v dw="$dw" -v dm="$dm" 'BEGIN {
	printf "ceiling/duckdb: wall %.2fx (target <= 2), peak memory %.2fx (target <= 1)\n", cw / dw, cm / dm
}'

# The two engines must agree on the numbers they both computed.
node -e '
const fs = require("fs");
const a = JSON.parse(fs.readFileSync(process.argv[1]));
const d = JSON.parse(fs.readFileSync(process.argv[2]));
let bad = 0;
for (const row of d) {
	const l = a.runs[0].levels.find(x => x.level === row.level);
	const s = l[row.metric + "_s"];
	const ours = [s.n, s.mean, s.p50, s.p90, s.p95, s.p99];
	const theirs = [row.n, row.mean, ...row.q];
	for (let i = 0; i < ours.length; i++) {
		if (Math.abs(ours[i] - theirs[i]) > 1e-9 * Math.max(1, Math.abs(theirs[i]))) {
			console.error(`level ${row.level} ${row.metric} [${i}]: ceiling ${ours[i]}, duckdb ${theirs[i]}`);
			bad++;
		}
	}
}
console.log(bad === 0 ? `agree on ${d.length} level/metric rows` : `${bad} disagreements`);
process.exit(bad === 0 ? 0 : 1);
' "$work/ceiling.out" "$work/duckdb.out"
