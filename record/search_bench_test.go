package record

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/searchrule"
	"github.com/ceiling-llm/ceiling/trace"
)

// BenchmarkSearch measures the ceiling search against sweeps on the test engine
// with known truths: the GPU time to the verdict (the sum of the level
// durations, what a GPU is rented for) and the answer, for
//
//   - search: --concurrency auto;
//   - doubling: the seed's ladder 1, 2, 4, ..., 1024, answered by analyze's
//     realistic ceiling;
//   - plan: plan's proposed ladder around the declared capacity (only where the
//     server declares one), answered the same way.
//
// The knee-bound configuration's truth is kneeTruth of its engine (searchknee_test.go).
//
// Run it with scripts/bench-search.sh (or go test ./record -run '^$' -bench
// Search -benchtime 1x); SEARCH_BENCH_DOUBLING=0 leaves the doubling ladder out
// (it runs 1024 requests at a time against 8 slots: minutes).
func BenchmarkSearch(b *testing.B) {
	// 64 + 16 = 80 tokens a request: 5 of vLLM's 16-token blocks exactly.
	const prompt, output = 64, 16
	configs := []struct {
		name  string
		eng   enginetest.Config
		truth float64
		setup func(o *Options)
	}{
		// The server batches 8 and queues the rest: throughput flat beyond 8.
		// Requests last 360 ms, so the client's turnaround between a worker's requests
		// (a few ms) leaves the slots idle for only about 1%.
		{"batch-bound", enginetest.Config{TTFT: 200 * time.Millisecond, TokenGap: 10 * time.Millisecond, Slots: 8}, 8, nil},
		// 16 slots, a p95 TTFT target of 150 ms the queue breaks at once; the knee
		// is off, so only the SLO can bind.
		{"slo-bound", enginetest.Config{TTFT: 50 * time.Millisecond, TokenGap: 5 * time.Millisecond, Slots: 16}, 16, func(o *Options) {
			c, _ := searchrule.ParseSLO("ttft", "p95:150ms")
			o.Criteria = append(DefaultCriteria(), c...)
			o.Knee = -1
		}},
		// vLLM-like paged KV cache of 12 requests (61 blocks: 12 × 5 and one for
		// the 1% watermark), declared in /metrics: the search never runs past it.
		{"kv-bound (declared)", enginetest.Config{Scheduler: "vllm", Kind: "vllm", KVTokens: 12*(prompt+output) + 16,
			StepTime: 5 * time.Millisecond}, 12, nil},
		// The same cache with --beyond-kv: the server's preemptions bound it.
		{"kv-bound (preemption)", enginetest.Config{Scheduler: "vllm", Kind: "vllm", KVTokens: 12*(prompt+output) + 16,
			StepTime: 5 * time.Millisecond}, 12, func(o *Options) { o.BeyondKV = true }},
	}
	// No slot cap, a decode step that grows with the batch past 8 (the roofline:
	// memory-bound up to 8, then each request adds 2.8 ms to every 20 ms gap):
	// throughput keeps rising past 8, by about 2% per doubling, so only the knee
	// (5% per doubling) binds. Requests last 350 ms at the knee, as the
	// batch-bound ones do. The truth is derived from the configuration.
	knee := enginetest.Config{TTFT: 50 * time.Millisecond, TokenGap: 20 * time.Millisecond, DecodeBatch: 8,
		BatchGap: 2800 * time.Microsecond}
	configs = append(configs, struct {
		name  string
		eng   enginetest.Config
		truth float64
		setup func(o *Options)
	}{"knee-bound", knee, kneeTruth(knee, output, defaultKnee), nil})
	doubling := os.Getenv("SEARCH_BENCH_DOUBLING") != "0"
	for _, cfg := range configs {
		// search+noise: the same search against the engine slowed by interference
		// (every token gap and step 0-20% longer, changing every 300 ms): the
		// answer must stay within the resolution of the truth.
		strategies := []string{"search", "search+noise", "plan"}
		if doubling {
			strategies = append(strategies, "doubling")
		}
		for _, strategy := range strategies {
			b.Run(cfg.name+"/"+strategy, func(b *testing.B) {
				for range b.N {
					ecfg := cfg.eng
					if strategy == "search+noise" {
						ecfg.Noise, ecfg.NoisePeriod, ecfg.NoiseSeed = 0.2, 300*time.Millisecond, uint64(time.Now().UnixNano())
					}
					eng := enginetest.New(ecfg)
					o := Options{URL: eng.URL(), PromptTokens: prompt, OutputTokens: output, Seed: 1, Version: "bench",
						Output: filepath.Join(b.TempDir(), "run.parquet"), Timeout: time.Minute, Grace: time.Second,
						ScrapeInterval: 100 * time.Millisecond, steadyState: time.Second}
					switch strategy {
					case "search", "search+noise":
						o.Auto, o.Analyzer = true, analyze.SearchFigures
						if cfg.setup != nil {
							cfg.setup(&o)
						}
					case "doubling":
						for c := 1; c <= 1024; c *= 2 {
							o.Concurrency = append(o.Concurrency, c)
						}
					case "plan":
						if cfg.eng.KVTokens == 0 {
							eng.Close()
							b.Skip("no declared capacity to plan around")
						}
						o.Concurrency = capacity.ProposeLevels(math.Floor(float64(cfg.eng.KVTokens) / (prompt + output)))
					}
					info, err := Record(context.Background(), o)
					eng.Close()
					if err != nil {
						b.Fatal(err)
					}
					answer := info.Search
					var ceiling float64
					if answer != nil {
						ceiling = answer.Ceiling
					} else {
						ceiling = ladderCeiling(b, o.Output, cfg.setup)
					}
					b.ReportMetric(levelSeconds(info.Levels), "gpu-s")
					b.ReportMetric(float64(len(info.Levels)), "levels")
					b.ReportMetric(ceiling, "ceiling")
					b.ReportMetric(cfg.truth, "truth")
					if answer != nil {
						var path []string
						for _, l := range info.Levels {
							if l.Search != nil {
								path = append(path, fmt.Sprintf("%d:%s:%s", l.Concurrency, l.Search.Phase, l.Search.Verdict))
							}
						}
						b.Logf("%s: %s; path %s", cfg.name, answer.Answer, strings.Join(path, " "))
						if math.Abs(ceiling-cfg.truth) > math.Max(0.1*cfg.truth, 1) {
							b.Errorf("%s: ceiling %g, truth %g: outside the resolution", cfg.name, ceiling, cfg.truth)
						}
					}
				}
			})
		}
	}
}

// levelSeconds is the sum of the levels' durations.
func levelSeconds(levels []trace.LevelInfo) float64 {
	var s float64
	for _, l := range levels {
		s += l.Ended.Sub(l.Started).Seconds()
	}
	return s
}

// ladderCeiling is analyze's realistic ceiling of a ladder's trace, with the SLO
// the configuration's search is given.
func ladderCeiling(b *testing.B, path string, setup func(*Options)) float64 {
	var opt analyze.Options
	opt.Resamples, opt.TimelineLevel = -1, -1
	if setup != nil {
		var o Options
		setup(&o)
		for _, c := range o.Criteria {
			if c.Kind == "latency" && c.Metric == "ttft" {
				v := c.Limit
				opt.SLO.TTFT = &v
			}
		}
	}
	a, err := analyze.Analyze(context.Background(), []string{path}, opt)
	if err != nil {
		b.Fatal(err)
	}
	if c := a.Runs[0].Ceiling.Concurrency; c != nil {
		return *c
	}
	return math.NaN()
}
