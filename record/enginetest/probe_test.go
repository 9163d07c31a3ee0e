package enginetest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestModelsAndHealth(t *testing.T) {
	s := New(Config{Model: `m"1`, MaxModelLen: 2048})
	defer s.Close()
	var models struct {
		Object string
		Data   []struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			MaxModelLen int    `json:"max_model_len"`
			OwnedBy     string `json:"owned_by"`
		}
	}
	if err := json.Unmarshal([]byte(get(t, s.URL()+"/v1/models")), &models); err != nil {
		t.Fatal(err)
	}
	if models.Object != "list" || len(models.Data) != 1 || models.Data[0].ID != `m"1` ||
		models.Data[0].MaxModelLen != 2048 || models.Data[0].OwnedBy != "enginetest" || models.Data[0].Object != "model" {
		t.Errorf("/v1/models: %+v", models)
	}
	get(t, s.URL()+"/health")
	resp, err := http.Get(s.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("generic engine /metrics: status %d, want 404", resp.StatusCode)
	}
	// A model id that needs JSON escaping streams valid JSON.
	body := chatBody("x", 2)
	body["model"] = `m"1`
	r := runStream(t, t.Context(), s.URL(), "/v1/chat/completions", body)
	if !r.done || r.badJSON != 0 || r.tokens != 2 {
		t.Errorf("stream with an escaped model id: %+v", r)
	}
}

func TestProbeEndpoints(t *testing.T) {
	tests := []struct {
		kind string
		path string
		want []string // substrings of the response
	}{
		{"vllm", "/metrics", []string{
			`vllm:cache_config_info{block_size="16",`, `num_gpu_blocks="512"} 1`,
			`vllm:num_requests_running{engine="0",model_name="test-model"} 0`,
			`vllm:num_requests_waiting{engine="0",model_name="test-model"} 0`,
			`vllm:kv_cache_usage_perc{engine="0",model_name="test-model"} 0`,
			`vllm:generation_tokens_total{engine="0",model_name="test-model"} 3`,
			`vllm:prompt_tokens_total{engine="0",model_name="test-model"} 2`,
			"# TYPE vllm:generation_tokens_total counter",
			`vllm:time_to_first_token_seconds_bucket{engine="0",model_name="test-model",le="+Inf"} 1`,
			`vllm:time_to_first_token_seconds_count{engine="0",model_name="test-model"} 1`}},
		{"llamacpp", "/metrics", []string{"llamacpp:tokens_predicted_total 3", "llamacpp:prompt_tokens_total 2",
			"llamacpp:requests_processing 0", "llamacpp:requests_deferred 0"}},
		{"llamacpp", "/props", []string{`"n_ctx":1024`, `"total_slots":4`}},
		{"llamacpp", "/slots", []string{`"id":3`, `"n_ctx":1024`}},
		{"sglang", "/get_server_info", []string{`"max_total_num_tokens":8192`, `"context_length":1024`}},
		{"sglang", "/metrics", []string{"sglang:num_running_reqs", "sglang:generation_tokens_total{model_name=\"test-model\"} 3"}},
	}
	for _, tc := range tests {
		t.Run(tc.kind+tc.path, func(t *testing.T) {
			s := New(Config{Kind: tc.kind, KVTokens: 8192, Slots: 4, MaxModelLen: 1024})
			defer s.Close()
			r := runStream(t, t.Context(), s.URL(), "/v1/chat/completions", chatBody("a b", 3))
			if !r.done {
				t.Fatalf("stream: %+v", r)
			}
			got := get(t, s.URL()+tc.path)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s lacks %q:\n%s", tc.path, w, got)
				}
			}
		})
	}
}

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		kind, body string
	}{
		{"llamacpp", `{"content":"one two  three\nfour"}`},
		{"vllm", `{"model":"test-model","prompt":"one two  three\nfour","add_special_tokens":false}`},
		{"vllm", `{"model":"test-model","messages":[{"role":"user","content":"one two"},{"role":"user","content":"three four"}]}`},
	} {
		s := New(Config{Kind: tc.kind})
		resp, err := http.Post(s.URL()+"/tokenize", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Tokens []int
			Count  *int
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		s.Close()
		if len(out.Tokens) != 4 || tc.kind == "vllm" && (out.Count == nil || *out.Count != 4) {
			t.Errorf("%s /tokenize %s: %d tokens, count %v; want 4", tc.kind, tc.body, len(out.Tokens), out.Count)
		}
	}
}

func TestModelsOwner(t *testing.T) {
	for _, kind := range []string{"vllm", "llamacpp", "sglang"} {
		s := New(Config{Kind: kind})
		got := get(t, s.URL()+"/v1/models")
		s.Close()
		if !strings.Contains(got, `"owned_by":"`+kind+`"`) {
			t.Errorf("%s /v1/models: %s", kind, got)
		}
	}
}

func TestStartRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{Kind: "tgi"}, {ReasoningField: "thinking"}, {Slots: -1}, {TTFT: -1},
		{Scheduler: "tgi", KVTokens: 100}, {Scheduler: SchedulerVLLM}, {Scheduler: SchedulerVLLM, Kind: "sglang", KVTokens: 100},
		{Scheduler: SchedulerVLLM, KVTokens: 100, MaxModelLen: 200}, {Scheduler: SchedulerSGLang, KVTokens: 100, Watermark: 1},
		{Scheduler: SchedulerLlamaSlots, KVTokens: 7, Slots: 4}} {
		if s, err := Start(cfg); err == nil {
			s.Close()
			t.Errorf("Start(%+v) accepted a bad config", cfg)
		}
	}
}

func TestCountTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"   ", 0}, {"a", 1}, {" a  b\tc\n", 3}, {"tok tok tok ", 3},
		{"héllo wörld", 2}, {"a\u00a0b", 2}, {"a\u2003b\u3000c", 3}, {"x\r\ny", 2},
	} {
		if got, want := CountTokens(tc.in), len(strings.Fields(tc.in)); got != tc.want || got != want {
			t.Errorf("CountTokens(%q) = %d, want %d (strings.Fields: %d)", tc.in, got, tc.want, want)
		}
	}
}

// TestVersion: a configured version is what the imitated server reports.
func TestVersion(t *testing.T) {
	for _, tc := range []struct{ kind, path, want string }{
		{"vllm", "/version", `"version":"0.10.1"`},
		{"llamacpp", "/props", `"build_info":"0.10.1"`},
		{"sglang", "/get_server_info", `"version":"0.10.1"`},
	} {
		s := New(Config{Kind: tc.kind, Version: "0.10.1"})
		if got := get(t, s.URL()+tc.path); !strings.Contains(got, tc.want) {
			t.Errorf("%s %s = %s, want %s", tc.kind, tc.path, got, tc.want)
		}
		s.Close()
	}
}
