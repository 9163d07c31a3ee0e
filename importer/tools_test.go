package importer

import (
	"strings"
	"testing"
)

// TestToolRegistry: each tool registers a name of its own, a detection rank of its
// own (so the order detection tries them in is decided, never by chance), a
// detector and a reader; --from lists them in the order of its help text.
func TestToolRegistry(t *testing.T) {
	names, ranks := map[string]bool{}, map[int]string{}
	for _, tl := range tools() {
		if tl.name == "" || tl.name == FromAuto || names[tl.name] {
			t.Errorf("tool name %q is empty, auto or registered twice", tl.name)
		}
		names[tl.name] = true
		if o, ok := ranks[tl.detectRank]; ok {
			t.Errorf("%s and %s share detection rank %d", o, tl.name, tl.detectRank)
		}
		ranks[tl.detectRank] = tl.name
		if tl.detect == nil || tl.read == nil {
			t.Errorf("%s has no detector or no reader", tl.name)
		}
		if got, ok := toolNamed(tl.name); !ok || got.name != tl.name {
			t.Errorf("toolNamed(%s) = %q, %v", tl.name, got.name, ok)
		}
	}
	want := "auto vllm vllm-sweep sglang aiperf guidellm llmperf inference-perf genai-bench llm-d inferencex"
	if got := strings.Join(Froms(), " "); got != want {
		t.Errorf("Froms() = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		tool string
		want bool
	}{{FromLLMD, true}, {FromInferenceX, true}, {FromVLLM, false}, {FromAIPerf, false}, {"nonesuch", false}} {
		if got := IsSummaryLevel(tc.tool); got != tc.want {
			t.Errorf("IsSummaryLevel(%s) = %v, want %v", tc.tool, got, tc.want)
		}
	}
}

// TestDetectContent: each tool's file is told apart by its keys, and a file with
// the keys of two tools goes to the more specific one (SGLang's bench_serving
// writes vLLM's keys too).
func TestDetectContent(t *testing.T) {
	for _, tc := range []struct {
		name, body, want, wantErr string
	}{
		{"vllm", `{"duration": 1, "mean_ttft_ms": 2}`, FromVLLM, ""},
		{"vllm ttfts", `{"ttfts": [0.1]}`, FromVLLM, ""},
		{"sglang", `{"duration": 1, "mean_ttft_ms": 2, "mean_e2e_latency_ms": 3}`, FromSGLang, ""},
		{"sweep summary", `[{"mean_ttft_ms": 2}]`, "", "a list of vLLM results"},
		{"aiperf csv", "Metric,avg,p50\nTTFT,1,1", FromAIPerf, ""},
		{"aiperf record", `{"metadata": {"x_request_id": "a"}, "metrics": {}}`, FromAIPerf, ""},
		{"aiperf summary", `{"aiperf_version": "0.3"}`, FromAIPerf, ""},
		{"guidellm", `{"benchmarks": [], "guidellm_version": "0.5"}`, FromGuideLLM, ""},
		{"llmperf", `[{"ttft_s": 1, "end_to_end_latency_s": 2}]`, FromLLMPerf, ""},
		{"llmperf summary", `{"results_ttft_s_mean": 1}`, FromLLMPerf, ""},
		{"inference-perf", `[{"start_time": 1, "end_time": 2, "info": {}}]`, FromInferencePerf, ""},
		{"inference-perf summary", `{"load_summary": {}, "successes": {}}`, FromInferencePerf, ""},
		{"genai-bench", `{"aggregated_metrics": {}, "individual_request_metrics": []}`, FromGenAIBench, ""},
		{"genai-bench metadata", `{"benchmark_version": "1", "traffic_scenario": []}`, FromGenAIBench, ""},
		{"llm-d yaml", "version: '0.2'\nscenario: {}\nrequest_performance: {}\n", FromLLMD, ""},
		{"llm-d json", `{"request_performance": {}, "scenario": {}}`, FromLLMD, ""},
		{"inferencex", `[{"output_tput_per_gpu": 1, "conc": 4}]`, FromInferenceX, ""},
		{"parquet", "PAR1...", "", "a Parquet file"},
		{"text", "hello", "", "not JSON"},
		{"foreign", `{"hello": 1}`, "", "JSON without the keys"},
	} {
		got, err := detectContent("f", []byte(tc.body))
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %q, %v; want an error saying %q", tc.name, got, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}
