#!/usr/bin/env bash
# bench-analyze-scale.sh: does `ceiling analyze` run in memory that does not grow
# with the number of requests? Generates traces of 1M and 10M requests (100 chunks
# each; about 0.26 and 2.6 GB), runs scripts/bench-analyze.sh on each (ceiling and
# DuckDB computing the same per-level TTFT and ITL count, mean and percentiles from
# the same file, checked to agree) and prints wall time and peak RSS side by side,
# as ratios. Target: ceiling's peak RSS at 10M at most 2× that at 1M.
#
#   scripts/bench-analyze-scale.sh [DIR] [SMALL] [LARGE]
#
# DIR holds the traces (default /tmp; kept between runs, regenerated only when
# missing); SMALL and LARGE are the request counts (default 1000000 10000000).
# Needs what bench-analyze.sh needs (GNU time, node, npm install --prefix
# scripts/duckdb). The analysis spills per-request values to $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-/tmp}
small=${2:-1000000}
large=${3:-10000000}
chunks=100

declare -A wall rss
for n in "$small" "$large"; do
	trace="$dir/ceiling-bench-$n.parquet"
	out=$(scripts/bench-analyze.sh "$trace" "$n" "$chunks")
	echo "$out" | sed "s/^/[$n requests] /"
	while read -r name w m; do
		case $name in ceiling | duckdb)
			wall[$name.$n]=$w
			rss[$name.$n]=$m
			;;
		esac
	done <<<"$out"
done

echo
echo "| requests | ceiling wall | ceiling peak RSS | DuckDB wall | DuckDB peak RSS | wall ceiling/DuckDB | RSS ceiling/DuckDB |"
echo "|---|---|---|---|---|---|---|"
for n in "$small" "$large"; do
	awk -v n="$n" -v cw="${wall[ceiling.$n]}" -v cm="${rss[ceiling.$n]}" -v dw="${wall[duckdb.$n]}" -v dm="${rss[duckdb.$n]}" 'BEGIN {
		printf "| %d | %.1f s | %.0f MB | %.1f s | %.0f MB | %.2f× | %.2f× |\n", n, cw, cm * 1024 / 1e6, dw, dm * 1024 / 1e6, cw / dw, cm / dm
	}'
done
awk -v a="${rss[ceiling.$small]}" -v b="${rss[ceiling.$large]}" -v wa="${wall[ceiling.$small]}" -v wb="${wall[ceiling.$large]}" \
	-v da="${rss[duckdb.$small]}" -v db="${rss[duckdb.$large]}" -v s="$small" -v l="$large" 'BEGIN {
	printf "\nceiling %d/%d requests: peak RSS %.2f× (target <= 2), wall %.2f×; DuckDB peak RSS %.2f×\n", l, s, b / a, wb / wa, db / da
	exit (b / a <= 2 ? 0 : 1)
}'
