package engine

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/depstest"
)

// TestNamesAreTheTraceFormat: the names are written into traces and the analysis'
// JSON, so each one's string is fixed.
func TestNamesAreTheTraceFormat(t *testing.T) {
	for _, tc := range []struct {
		name Name
		want string
	}{
		{VLLM, "vllm"}, {SGLang, "sglang"}, {LlamaCpp, "llamacpp"}, {TGI, "tgi"},
		{TensorRTLLM, "trtllm"}, {NIM, "nim"}, {Unknown, "unknown"},
	} {
		if string(tc.name) != tc.want {
			t.Errorf("%s is written %q, want %q", tc.want, tc.name, tc.want)
		}
	}
}

// TestAllIsConsistent: every engine has its own name, a title and a prefix of its
// own, and each of its metric names is told to be its own by OfMetric.
func TestAllIsConsistent(t *testing.T) {
	names := map[Name]bool{}
	prefixes := map[string]Name{}
	metrics := map[string]Name{}
	for _, e := range All() {
		if e.Name == "" || e.Name == Unknown || names[e.Name] {
			t.Errorf("engine name %q is empty, Unknown or listed twice", e.Name)
		}
		names[e.Name] = true
		if e.Title == "" {
			t.Errorf("%s has no title", e.Name)
		}
		if e.MetricPrefix != "" {
			if o, ok := prefixes[e.MetricPrefix]; ok {
				t.Errorf("%s and %s share the metric prefix %q", o, e.Name, e.MetricPrefix)
			}
			prefixes[e.MetricPrefix] = e.Name
		}
		if len(e.Metrics) == 0 {
			t.Errorf("%s has no metric names", e.Name)
		}
		for m := range e.Metrics {
			if o, ok := metrics[m]; ok {
				t.Errorf("metric %s is both %s's and %s's", m, o, e.Name)
			}
			metrics[m] = e.Name
			if got := OfMetric(m); got != e.Name {
				t.Errorf("OfMetric(%q) = %s, want %s", m, got, e.Name)
			}
		}
		if got, ok := Of(e.Name); !ok || got.Name != e.Name {
			t.Errorf("Of(%s) = %s, %v", e.Name, got.Name, ok)
		}
	}
	if _, ok := Of(Unknown); ok {
		t.Error("Of(Unknown) found an engine")
	}
}

func TestOfMetric(t *testing.T) {
	for _, tc := range []struct {
		metric string
		want   Name
	}{
		{"vllm:num_requests_running", VLLM},
		{"num_requests_running", NIM},
		{"sglang:token_usage", SGLang},
		{"llamacpp:requests_processing", LlamaCpp},
		{"tgi_queue_size", TGI},
		{"nv_trt_llm_request_metrics", TensorRTLLM},
	} {
		if got := OfMetric(tc.metric); got != tc.want {
			t.Errorf("OfMetric(%q) = %s, want %s", tc.metric, got, tc.want)
		}
	}
}

// TestBenchOf: an imported run's tool finds its engine's advice by name, any case,
// the sweep variant included; other tools have none.
func TestBenchOf(t *testing.T) {
	for _, tc := range []struct {
		tool string
		want string // a word of the advice, "" for none
	}{
		{"vllm", "vllm bench serve"},
		{"vllm-sweep", "vllm bench serve"},
		{"SGLang", "sglang.bench_serving"},
		{"guidellm", ""},
		{"genai-bench", ""},
		{"", ""},
	} {
		b := BenchOf(tc.tool)
		switch {
		case tc.want == "" && b != nil:
			t.Errorf("BenchOf(%q) = %q, want none", tc.tool, b.Higher)
		case tc.want != "" && b == nil:
			t.Errorf("BenchOf(%q) = none, want %s's advice", tc.tool, tc.want)
		case tc.want != "" && (!strings.Contains(b.Higher, tc.want) || !strings.Contains(b.Rerun(40, 8), tc.want)):
			t.Errorf("BenchOf(%q): %q / %q do not name %s", tc.tool, b.Higher, b.Rerun(40, 8), tc.want)
		}
	}
}

// TestErrorTextsAreLowerCase: error texts are matched against the lower-cased
// message, so a text with a capital letter would never match.
func TestErrorTextsAreLowerCase(t *testing.T) {
	for _, list := range [][]string{KVExhaustedTexts(), ContextExceededTexts()} {
		if len(list) == 0 {
			t.Error("no error texts")
		}
		for _, s := range list {
			if s == "" || s != strings.ToLower(s) {
				t.Errorf("error text %q is empty or not lower case", s)
			}
		}
	}
}

// TestImportsNothingOfOurs: the recorder, the trace format, the importer and the
// analysis all use this package, so it must sit below every one of them: it
// imports nothing of ours but the number formatter.
func TestImportsNothingOfOurs(t *testing.T) {
	for _, p := range depstest.Ours(t) {
		if p != "engine" && p != "internal/numfmt" {
			t.Errorf("engine depends on %s", p)
		}
	}
}

// TestKVSource: the declared KV capacity is named in each engine's own terms, the
// words the analysis has always written (capacity.source_detail).
func TestKVSource(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		engine Name
		d      DeclaredKV
		want   string
	}{
		{VLLM, DeclaredKV{Tokens: 351424, NumGPUBlocks: p(21964), BlockSize: p(16)}, "vLLM cache_config_info: num_gpu_blocks 21964 × block_size 16 = 351,424 tokens per engine"},
		{VLLM, DeclaredKV{Tokens: 400000, NumGPUBlocks: p(21964), BlockSize: p(16)}, "vLLM cache_config_info kv_cache_size_tokens 400,000 per engine (num_gpu_blocks 21964 × block_size 16 = 351,424 counts the smallest group's blocks)"},
		{VLLM, DeclaredKV{Tokens: 1000}, "vLLM cache_config_info: 1,000 tokens per engine"},
		{SGLang, DeclaredKV{Tokens: 2048}, "SGLang max_total_num_tokens 2,048 (/get_server_info) per DP rank"},
		{TGI, DeclaredKV{Tokens: 2048}, "TGI max_batch_total_tokens 2,048 (/info)"},
	} {
		e, ok := Of(tc.engine)
		if !ok || e.KVSource == nil {
			t.Errorf("%s names no KV source", tc.engine)
			continue
		}
		if got := e.KVSource(tc.d); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.engine, got, tc.want)
		}
	}
}

// TestContextFlags: the advice names each engine's own flag, in the words the
// recorder's context check has always used.
func TestContextFlags(t *testing.T) {
	if got, want := ContextFlags(), "vLLM: --max-model-len; SGLang: --context-length"; got != want {
		t.Errorf("ContextFlags() = %q, want %q", got, want)
	}
}

// TestPrefixSharing: the engines that hold a shared prefix once say so with their
// cache's unit; llama.cpp, whose slots each keep their own copy, does not.
func TestPrefixSharing(t *testing.T) {
	for _, tc := range []struct {
		name  Name
		block int // 0: no cross-request sharing credited
	}{
		{VLLM, 16}, {SGLang, 1}, {LlamaCpp, 0},
	} {
		e, ok := Of(tc.name)
		if !ok {
			t.Fatalf("%s: unknown", tc.name)
		}
		got := 0
		if e.Prefix != nil {
			got = e.Prefix.BlockTokens
		}
		if got != tc.block {
			t.Errorf("%s: prefix block %d, want %d", tc.name, got, tc.block)
		}
	}
}

// TestOfOwnedByAndMetricPrefix: the probe tells the engine from owned_by and from
// a /metrics series' prefix; what no engine writes names none.
func TestOfOwnedByAndMetricPrefix(t *testing.T) {
	for _, tc := range []struct {
		owned  string
		want   Name
		wantOK bool
	}{{"vllm", VLLM, true}, {"sglang", SGLang, true}, {"llamacpp", LlamaCpp, true}, {"system", Unknown, false}, {"", Unknown, false}} {
		if n, ok := OfOwnedBy(tc.owned); n != tc.want || ok != tc.wantOK {
			t.Errorf("OfOwnedBy(%q) = %q, %v; want %q, %v", tc.owned, n, ok, tc.want, tc.wantOK)
		}
	}
	for _, tc := range []struct {
		series string
		want   Name
		wantOK bool
	}{{"vllm:num_requests_running", VLLM, true}, {"sglang:num_running_reqs", SGLang, true},
		{"llamacpp:requests_processing", LlamaCpp, true}, {"tgi_queue_size", TGI, true}, {"process_cpu_seconds_total", Unknown, false}} {
		if n, ok := OfMetricPrefix(tc.series); n != tc.want || ok != tc.wantOK {
			t.Errorf("OfMetricPrefix(%q) = %q, %v; want %q, %v", tc.series, n, ok, tc.want, tc.wantOK)
		}
	}
	if e, _ := Of(VLLM); e.DeclaredKVSeries == "" || !strings.HasPrefix(e.DeclaredKVSeries, e.MetricPrefix) {
		t.Errorf("vLLM's declared KV series %q does not carry its prefix", e.DeclaredKVSeries)
	}
}

// TestTierMetrics: each KV tier series carries its owner's prefix, is named
// without _total (the analysis adds it), has a RoleTier role and is that role's
// only series, so that TierSeries names what the analysis read; every tier role
// the analysis reads has its series.
func TestTierMetrics(t *testing.T) {
	owners := map[Role][]string{} // series names by role
	check := func(owner, prefix string, m map[string]Role) {
		for name, role := range m {
			if !strings.HasPrefix(name, prefix) || strings.HasSuffix(name, "_total") {
				t.Errorf("%s's tier series %q does not carry its prefix %q or ends in _total", owner, name, prefix)
			}
			if !strings.HasPrefix(string(role), "tier_") {
				t.Errorf("%s's tier series %q has the role %q, not a tier role", owner, name, role)
			}
			owners[role] = append(owners[role], name)
		}
	}
	for _, e := range All() {
		check(e.Title, e.MetricPrefix, e.TierMetrics)
	}
	for _, c := range Connectors() {
		if c.Title == "" || c.MetricPrefix == "" {
			t.Errorf("connector %+v has no title or prefix", c)
		}
		if _, ok := OfMetricPrefix(c.MetricPrefix + "x"); ok {
			t.Errorf("connector %s's prefix %q is an engine's", c.Title, c.MetricPrefix)
		}
		check(c.Title, c.MetricPrefix, c.TierMetrics)
	}
	for role, names := range owners {
		if len(names) != 1 {
			t.Errorf("tier role %s has the series %q, want one", role, names)
		}
	}
	for _, tc := range []struct {
		role Role
		want string
	}{
		{RoleTierPromptBySource, "vllm:prompt_tokens_by_source"},
		{RoleTierPrompt, "vllm:prompt_tokens"},
		{RoleTierGPUHits, "vllm:prefix_cache_hits"},
		{RoleTierExternalHits, "vllm:external_prefix_cache_hits"},
		{RoleTierOffloadBytes, "vllm:kv_offload_total_bytes"},
		{RoleTierHostUsage, "vllm:kv_offload_cpu_cache_usage_perc"},
		{RoleTierConnectorHits, "lmcache:num_hit_tokens"},
		{RoleTierConnectorRequested, "lmcache:num_requested_tokens"},
		{RoleTierConnectorBytes, "lmcache:local_cache_usage"},
		{RoleTierCachedBySource, "sglang:cached_tokens"},
		{RoleTierCachedOf, "sglang:prompt_tokens"},
		{RoleTierHostUsedTokens, "sglang:hicache_host_used_tokens"},
		{RoleTierHostTokens, "sglang:hicache_host_total_tokens"},
	} {
		if got := TierSeries(tc.role); got != tc.want {
			t.Errorf("TierSeries(%s) = %q, want %q", tc.role, got, tc.want)
		}
		delete(owners, tc.role)
	}
	if len(owners) > 0 {
		t.Errorf("tier roles %v are not checked here", owners)
	}
	if got := TierSeries(RoleRunning); got != "" {
		t.Errorf("TierSeries(%s) = %q, want none", RoleRunning, got)
	}
}
