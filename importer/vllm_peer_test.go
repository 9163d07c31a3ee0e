package importer_test

import (
	"context"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/ceiling-llm/ceiling/importer/importanalysis"
	"github.com/ceiling-llm/ceiling/internal/peertest"
)

// TestMatchesVLLMBenchServe imports real vLLM benchmark runs with package importer
// (one run per file, one level per result) and checks that TTFT, ITL and TPOT
// mean, median and percentiles match vLLM's own summary numbers, read here
// straight from the JSON, and that throughput is vLLM's own where the file saved
// no send times.
//
// Tolerances: INDEX.md gives 1e-12 (TTFT, ITL) and 2e-6 relative (TPOT, whose E2E
// vLLM rebuilds from ttft + sum(itls)) for float arrays. The trace format stores
// times as integer ns and gaps as integer µs, so the bounds add that quantization:
// 1 ns for TTFT, 0.5 µs for ITL (rounding is monotone, so every order statistic and
// their interpolation move by at most half a step), 1 ns / (output−1) for TPOT.
func TestMatchesVLLMBenchServe(t *testing.T) {
	peers := peertest.VLLM(t)
	files, err := filepath.Glob(filepath.Join(peerDir(t), "*.json*"))
	if err != nil {
		t.Fatal(err)
	}
	checked, results := 0, 0
	for _, f := range files {
		run, err := importer.Import(context.Background(), []string{f}, importer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		runs, err := importanalysis.Analyze(context.Background(), run, importer.WriteOptions{}, analyze.Options{TimelineLevel: -1})
		if err != nil {
			t.Fatal(err)
		}
		levels := runs[0].Levels
		// Results of one file keep file order among equal concurrencies, and the
		// files here list their lowest concurrency first.
		var names []string
		for n := range peers {
			if n == filepath.Base(f) || strings.HasPrefix(n, filepath.Base(f)+"#") {
				names = append(names, n)
			}
		}
		sort.Slice(names, func(i, j int) bool { return lineOf(names[i]) < lineOf(names[j]) })
		if len(levels) != len(names) {
			t.Fatalf("%s: got %d levels, want %d", f, len(levels), len(names))
		}
		for lvl, name := range names {
			p, l := peers[name], levels[lvl]
			results++
			if c, ok := p.Summary["max_concurrency"].(float64); ok && int(c) != l.Concurrency {
				t.Fatalf("%s: level %d has concurrency %d, vLLM's max_concurrency %g", name, lvl, l.Concurrency, c)
			}
			if len(p.StartTimes) == 0 {
				// No send times: throughput is vLLM's own (total output / duration).
				for _, m := range []struct {
					key string
					got float64
				}{{"output_throughput", l.OutputTokS}, {"request_throughput", l.RequestS}} {
					want := p.Summary[m.key].(float64)
					checked++
					if math.Abs(m.got-want) > 1e-9*want {
						t.Errorf("%s %s = %v, vLLM %.12g", name, m.key, m.got, want)
					}
				}
			}
			for _, m := range []struct {
				metric string
				s      analyze.Summary
				tol    func(v float64) float64
			}{
				{"ttft", l.TTFT, func(v float64) float64 { return 1e-9 + 1e-12*math.Abs(v) }},
				{"itl", l.ITL, func(v float64) float64 { return 5e-7 + 1e-12*math.Abs(v) }},
				{"tpot", l.TPOT, func(v float64) float64 { return 1e-9 + 2e-6*math.Abs(v) }},
			} {
				for _, stat := range []struct {
					key string
					got *float64
				}{
					{"mean", m.s.Mean}, {"median", m.s.P50}, {"p50", m.s.P50}, {"p90", m.s.P90},
					{"p95", m.s.P95}, {"p99", m.s.P99},
				} {
					want, ok := p.Summary[stat.key+"_"+m.metric+"_ms"].(float64)
					if !ok {
						continue
					}
					want /= 1e3
					checked++
					if m.s.N == 0 {
						// vLLM writes 0 for the statistics of an empty list ("or 0");
						// ceiling reports them as null with n = 0.
						if want != 0 || stat.got != nil {
							t.Errorf("%s %s %s: n = 0, got %v, vLLM %g", name, m.metric, stat.key, stat.got, want)
						}
						continue
					}
					if stat.got == nil || math.Abs(*stat.got-want) > m.tol(want) {
						t.Errorf("%s %s %s = %v, vLLM %.12g (tolerance %g)", name, m.metric, stat.key, deref(stat.got), want, m.tol(want))
					}
				}
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d statistics compared; the peer files changed?", checked)
	}
	t.Logf("%d statistics of %d vLLM results match", checked, results)
}

// lineOf is the line index of a "file#N" peer name (0 for a whole file).
func lineOf(name string) int {
	_, n, ok := strings.Cut(name, "#")
	if !ok {
		return 0
	}
	i, _ := strconv.Atoi(n)
	return i
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
