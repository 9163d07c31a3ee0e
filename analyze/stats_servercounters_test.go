package analyze

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/prom"
	"github.com/ceiling-llm/ceiling/internal/sharedtest"
)

// TestSnapshotFixtures parses every real /metrics dump and maps it to the figures
// its INDEX.md lists; each expected value is also checked to be written in INDEX.md
// as given, so the table cannot drift from the fixtures' own description.
func TestSnapshotFixtures(t *testing.T) {
	// Real /metrics dumps of inference servers, shared beside the repository.
	metricsFixtures := sharedtest.Dir(t, "metrics-fixtures")
	index, err := os.ReadFile(filepath.Join(metricsFixtures, "INDEX.md"))
	if err != nil {
		t.Fatalf("the metrics fixtures' index: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(metricsFixtures, "*.prom"))
	snaps := map[string]snapshot{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		samples, err := prom.Parse(strings.NewReader(string(raw)))
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		var cs []counterSample
		for _, s := range samples {
			cs = append(cs, counterSample{s.Name, s.Labels, s.Value})
		}
		snaps[filepath.Base(f)] = mapSnapshot(cs)
	}
	type want struct {
		figure string
		get    func(snapshot) *float64
		value  float64
		asText string // how INDEX.md writes it ("" = derived, not written)
	}
	running := func(s snapshot) *float64 { return s.running }
	waiting := func(s snapshot) *float64 { return s.waiting }
	kv := func(s snapshot) *float64 { return s.kvUsage }
	declared := func(s snapshot) *float64 { return s.declaredKV }
	for _, c := range []struct {
		file, engine string
		wants        []want
		absent       []string
	}{
		{"vllm-0.4.3-2024-06-opt125m-v0-datadog.prom", "vllm", []want{
			{"running", running, 0, "`0.0`"}, {"waiting", waiting, 0, "waiting `0.0`"},
			{"KV usage (gpu_cache_usage_perc)", kv, 0, "`vllm:gpu_cache_usage_perc` `0.0`"},
			{"declared KV", declared, 116496, "116,496 tokens"},
			{"preemptions", func(s snapshot) *float64 { return s.preemptions }, 0, "preemptions `vllm:num_preemptions_total{...} 0.0`"},
			{"generation tokens", func(s snapshot) *float64 { return s.genTokens }, 7, "generation_tokens_total `7.0`"},
		}, nil},
		{"vllm-0.10.0-2025-07-glm45-prodstack617-excerpt.prom", "vllm", []want{
			{"KV usage", kv, 9.75010481363281e-06, "9.75010481363281e-06"},
			{"prefix queries", func(s snapshot) *float64 { return s.prefixQueries }, 32, "`vllm:prefix_cache_queries_total{engine=\"0\",...} 32.0`"},
		}, nil},
		{"nim-llm-1.0.0-2024-10-llama31-8b-running1-datadog.prom", "nim", []want{
			{"running", running, 1, "`num_requests_running{model_name=\"meta/llama-3.1-8b-instruct\"} 1.0`"},
			{"waiting", waiting, 0, "`num_requests_waiting{...} 0.0`"},
			{"KV usage", kv, 0.0002848191398461977, "0.0002848191398461977"},
			{"generation tokens", func(s snapshot) *float64 { return s.genTokens }, 174, "generation_tokens_total `174.0`"},
		}, []string{"preemptions", "declared"}},
		{"sglang-0.4.x-docs-llama31-8b-under-load.prom", "sglang", []want{
			{"running", running, 162, "162.0"}, {"waiting", waiting, 2826, "2826.0"},
			{"KV usage", kv, 0.28, "0.28"},
			{"used tokens", func(s snapshot) *float64 { return s.usedTokens }, 123859, "123859.0"},
			{"hit rate", func(s snapshot) *float64 { return s.hitRate }, 0.007507552643049313, "0.007507552643049313"},
			{"gen throughput", func(s snapshot) *float64 { return s.genThroughput }, 86.50814177726902, "86.50814177726902"},
		}, []string{"declared"}},
		{"llamacpp-b4687-2025-02-idle-nan-pr11915-excerpt.prom", "llamacpp", nil, nil},
		{"llamacpp-2025-post13660-complete-unattributed.prom", "llamacpp", []want{
			{"processing", running, 0, "processing `llamacpp:requests_processing 0`"},
			{"deferred", waiting, 0, "deferred `llamacpp:requests_deferred 0`"},
			{"tokens predicted", func(s snapshot) *float64 { return s.genTokens }, 7801, "tokens_predicted_total `7801`"},
		}, []string{"kv"}},
		{"tgi-3.x-datadog-payload-excerpt.prom", "tgi", []want{
			{"batch", running, 0, "batch `tgi_batch_current_size 0`"}, {"queue", waiting, 0, "queue `tgi_queue_size 0`"},
			{"batch max tokens", func(s snapshot) *float64 { return s.usedTokens }, 0, "`tgi_batch_current_max_tokens 0`"},
		}, nil},
		{"trtllm-triton-backend-readme-2025-04-inflight-batcher.prom", "trtllm", []want{
			{"active", running, 0, "active `0`"}, {"waiting", waiting, 1, "waiting `1`"},
			{"max", func(s snapshot) *float64 { return s.maxRunning }, 512, "max `512`"},
			// Used / max blocks, not the contradicting fraction gauge (0.4875).
			{"KV usage", kv, 1.0 / 6239, ""},
			{"declared KV (max × tokens_per)", declared, 6239 * 64, ""},
		}, nil},
	} {
		s, ok := snaps[c.file]
		if !ok {
			t.Errorf("fixture %s missing", c.file)
			continue
		}
		if string(s.engine) != c.engine {
			t.Errorf("%s: engine %q, want %q", c.file, s.engine, c.engine)
		}
		for _, w := range c.wants {
			if w.asText != "" && !strings.Contains(string(index), w.asText) {
				t.Errorf("%s: INDEX.md does not say %s", c.file, w.asText)
			}
			got := w.get(s)
			if got == nil || math.Abs(*got-w.value) > 1e-12*math.Max(1, math.Abs(w.value)) {
				t.Errorf("%s: %s = %s, want %v", c.file, w.figure, fmtPtr(got), w.value)
			}
		}
		for _, a := range c.absent {
			var v *float64
			switch a {
			case "preemptions":
				v = s.preemptions
			case "declared":
				v = s.declaredKV
			case "kv":
				v = s.kvUsage
			}
			if v != nil {
				t.Errorf("%s: %s = %v, want none", c.file, a, *v)
			}
		}
	}
}

// TestSnapshotCombinesSeries checks the combination rules on hand-written scrapes:
// data-parallel vLLM engines summed (usage averaged), waiting_by_reason not added,
// _created ignored, kv_cache_size_tokens preferred to blocks × block size, SGLang
// dp_rank series summed for running and averaged for usage.
func TestSnapshotCombinesSeries(t *testing.T) {
	vllm := mapSnapshot([]counterSample{
		{"vllm:num_requests_running", `engine="0"`, 10}, {"vllm:num_requests_running", `engine="1"`, 6},
		{"vllm:num_requests_waiting", `engine="0"`, 3}, {"vllm:num_requests_waiting_by_reason", `engine="0",reason="capacity"`, 3},
		{"vllm:kv_cache_usage_perc", `engine="0"`, 0.9}, {"vllm:kv_cache_usage_perc", `engine="1"`, 0.5},
		{"vllm:num_preemptions_total", `engine="0"`, 4}, {"vllm:num_preemptions_created", `engine="0"`, 1.7e9},
		{"vllm:cache_config_info", `block_size="256",kv_cache_size_tokens="1000000",num_gpu_blocks="5000"`, 1},
	})
	for name, c := range map[string][2]*float64{
		"running": {vllm.running, ptr(16.0)}, "waiting": {vllm.waiting, ptr(3.0)}, "kv": {vllm.kvUsage, ptr(0.7)},
		"preemptions": {vllm.preemptions, ptr(4.0)}, "declared": {vllm.declaredKV, ptr(1e6)},
	} {
		if c[0] == nil || math.Abs(*c[0]-*c[1]) > 1e-9 {
			t.Errorf("vLLM %s = %s, want %v", name, fmtPtr(c[0]), *c[1])
		}
	}
	sg := mapSnapshot([]counterSample{
		{"sglang:num_running_reqs", `dp_rank="0"`, 40}, {"sglang:num_running_reqs", `dp_rank="1"`, 20},
		{"sglang:token_usage", `dp_rank="0"`, 0.8}, {"sglang:token_usage", `dp_rank="1"`, 0.4},
		{"sglang:max_total_num_tokens", `dp_rank="0"`, 1000}, {"sglang:max_total_num_tokens", `dp_rank="1"`, 1000},
	})
	if *sg.running != 60 || math.Abs(*sg.kvUsage-0.6) > 1e-9 || *sg.declaredKV != 2000 {
		t.Errorf("SGLang DP: running %v, usage %v, declared %v; want 60, 0.6, 2000", *sg.running, *sg.kvUsage, *sg.declaredKV)
	}
}

func TestLevelCountersWindow(t *testing.T) {
	var snaps []timedSnapshot
	for i := range 11 { // one scrape a second; running climbs to 8, preemptions 1/s from 5 s
		s := snapshot{engine: "vllm", running: ptr(float64(min(i, 8))), kvUsage: ptr(float64(i) / 10),
			preemptions: ptr(float64(max(0, i-5))), genTokens: ptr(float64(100 * i))}
		snaps = append(snaps, timedSnapshot{int64(i) * 1e9, s})
	}
	c := levelCounters(snaps, 4e9, 10e9)
	if c == nil || c.Scrapes != 7 {
		t.Fatalf("counters %+v, want 7 scrapes", c)
	}
	if *c.RunningMax != 8 || math.Abs(*c.RunningMean-(4+5+6+7+8+8+8)/7.0) > 1e-9 {
		t.Errorf("running mean %v max %v", *c.RunningMean, *c.RunningMax)
	}
	if *c.KVUsageMax != 1 || *c.Preemptions != 5 || math.Abs(*c.PreemptionsPerS-5.0/6) > 1e-9 || *c.GenerationTokS != 100 {
		t.Errorf("kv max %v, preemptions %v (%v/s), gen %v tok/s", *c.KVUsageMax, *c.Preemptions, *c.PreemptionsPerS, *c.GenerationTokS)
	}
	if levelCounters(snaps, 20e9, 30e9) != nil {
		t.Error("counters for a window without scrapes")
	}
}

// A level whose window holds no scrape keeps no counters and is named in a
// warning, while a level with scrapes gets its own: a short level is never
// dropped from the server's evidence silently.
func TestServerCountersNameLevelsWithoutScrape(t *testing.T) {
	var snaps []timedSnapshot
	for i := range 5 { // scrapes at 0..4 s
		snaps = append(snaps, timedSnapshot{int64(i) * 1e9, snapshot{engine: "llamacpp", running: ptr(2.0)}})
	}
	r := &Run{Levels: []Level{
		{Level: 0, Concurrency: 2, winStartNs: 0, winEndNs: 3e9},
		{Level: 1, Concurrency: 8, winStartNs: 4.2e9, winEndNs: 4.65e9},
	}}
	attachServerCounters(r, snaps)
	if r.Levels[0].Server == nil || r.Levels[1].Server != nil {
		t.Fatalf("server counters %+v, %+v: want the first level's only", r.Levels[0].Server, r.Levels[1].Server)
	}
	if !containsSubstring(r.Warnings, "1 of 2 levels have no scrape") || !containsSubstring(r.Warnings, "level 1 (c=8, window 450ms)") {
		t.Errorf("warnings %q do not name level 1 and its window", r.Warnings)
	}
}
