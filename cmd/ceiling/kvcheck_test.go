package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// kvTestTokens is the KV capacity the capacity flags below model for Llama-3.1-8B:
// 20 GiB × 0.9 − 17.5 GiB weights − 0.25 GiB reserve = 0.25 GiB at 128 KiB a token.
const kvTestTokens = 2048

func kvCapFlags(config string) []string {
	return []string{"--model-config", config, "--gpu-memory-gib", "20", "--gpu-util", "0.9",
		"--weights-gib", "17.5", "--reserve-gib", "0.25"}
}

// TestEngineThreeWayKVCheck sweeps the test engine's vLLM, SGLang and llama.cpp
// imitations, each with a KV cache of what the capacity model predicts, past the
// point where it fills: the modelled, declared and observed capacities agree, the
// server counters show the engine's own scheduling, and the verdict names the limit
// the server shows. The same vLLM sweep analyzed with the wrong --model-config
// (Llama-3.1-70B: 320 KiB a token) gives the disagreement warning.
func TestEngineThreeWayKVCheck(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		cfg   enginetest.Config
		limit string // the server binding expected
	}{
		{"vllm", enginetest.Config{Kind: "vllm", KVTokens: kvTestTokens}, "kv"},
		{"sglang", enginetest.Config{Kind: "sglang", KVTokens: kvTestTokens}, "kv"},
		// llama.cpp: 4 slots of 512 tokens; the slots bind before the KV cache fills.
		{"llamacpp", enginetest.Config{Kind: "llamacpp", Slots: 4, MaxModelLen: 512, KVTokens: kvTestTokens}, "batch"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			tc.cfg.Model, tc.cfg.TTFT, tc.cfg.TokenGap = "m", 2*time.Millisecond, 2*time.Millisecond
			eng := enginetest.New(tc.cfg)
			defer eng.Close()
			trace := filepath.Join(t.TempDir(), "kv.parquet")
			ceiling(t, "record", "--url", eng.URL(), "--concurrency", "4,8,16", "--requests-per-level", "64",
				"--prompt-tokens", "160", "--output-tokens", "40", "--ignore-eos", "--scrape-interval", "20ms", "-o", trace)
			var a analyze.Analysis
			args := append([]string{"analyze", trace, "--format", "json"}, kvCapFlags("../../samples/models/llama-3.1-8b.json")...)
			if err := json.Unmarshal([]byte(ceiling(t, args...)), &a); err != nil {
				t.Fatal(err)
			}
			r := a.Runs[0]
			k := r.KVCheck
			if k == nil || k.Agree == nil || !*k.Agree || k.ObservedTokens == nil || k.DeclaredTokens == nil || k.ModelledTokens == nil {
				t.Fatalf("KV check %+v, want three figures that agree", k)
			}
			t.Logf("%s: %s", tc.kind, k.Verdict)
			for _, l := range r.Levels {
				s := l.Server
				if s == nil || s.RunningMean == nil || s.KVUsageMax == nil {
					t.Fatalf("level %d: no server counters: %+v", l.Level, s)
				}
				// Running never exceeds what the engine admits; the client's in-flight
				// count is running + waiting.
				if tc.cfg.Slots > 0 && *s.RunningMax > float64(tc.cfg.Slots) {
					t.Errorf("level %d: running max %v above the %d slots", l.Level, *s.RunningMax, tc.cfg.Slots)
				}
				if *s.KVUsageMax > 1 {
					t.Errorf("level %d: KV usage %v above 1", l.Level, *s.KVUsageMax)
				}
			}
			if b := r.ServerBinding; b == nil || b.Limit != tc.limit {
				t.Errorf("server binding %+v, want %s", b, tc.limit)
			}
			if !strings.Contains(strings.Join(r.Ceiling.Evidence, "\n"), "client side:") {
				t.Errorf("the verdict does not cite the client side beside the server: %q", r.Ceiling.Evidence)
			}
			if tc.kind != "vllm" {
				return
			}
			args = append([]string{"analyze", trace, "--format", "json"}, kvCapFlags("../../samples/models/llama-3.1-70b.json")...)
			var wrong analyze.Analysis
			if err := json.Unmarshal([]byte(ceiling(t, args...)), &wrong); err != nil {
				t.Fatal(err)
			}
			w := strings.Join(wrong.Runs[0].Warnings, "\n")
			if !strings.Contains(w, "KV capacity check:") || !strings.Contains(w, "--model-config") {
				t.Errorf("no disagreement warning naming --model-config with the wrong config:\n%s", w)
			}
		})
	}
}
