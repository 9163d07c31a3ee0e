#!/usr/bin/env bash
# The ceiling search's benchmark (issue 19): GPU time to the verdict and the answer
# for the search, the doubling ladder 1..1024 and plan's ladder, on the test engine
# with known truths. SEARCH_BENCH_DOUBLING=0 leaves the (minutes-long) doubling
# ladder out. Prints the benchmark lines, then the ratios of GPU time.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test ./record -run '^$' -bench 'BenchmarkSearch' -benchtime 1x -timeout 60m "$@" | tee /dev/stderr)
echo
echo "GPU time of the search over the other strategies (lower is better):"
echo "$out" | awk '
  /^BenchmarkSearch\// {
    split($1, p, "/"); cfg = p[2]; st = p[3]; sub(/-[0-9]+$/, "", st)
    for (i = 2; i <= NF; i++) if ($(i+1) == "gpu-s") g[cfg "/" st] = $i
    for (i = 2; i <= NF; i++) if ($(i+1) == "ceiling") c[cfg "/" st] = $i
    cfgs[cfg] = 1
  }
  END {
    for (cfg in cfgs) {
      s = g[cfg "/search"]
      line = sprintf("%-24s search %s s (ceiling %s)", cfg, s, c[cfg "/search"])
      if (g[cfg "/doubling"] > 0) line = line sprintf("; doubling %s s (ceiling %s): ratio %.2f", g[cfg "/doubling"], c[cfg "/doubling"], s / g[cfg "/doubling"])
      if (g[cfg "/plan"] > 0) line = line sprintf("; plan %s s (ceiling %s): ratio %.2f", g[cfg "/plan"], c[cfg "/plan"], s / g[cfg "/plan"])
      print line
    }
  }'
