package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestRecordSearchStartUsesEngineReserve (issue 28, item 4): record --concurrency
// auto with --model-config and --gpu starts the search at the plan's prediction,
// and the prediction's reserve is the one modelled for the engine the probe
// found, as plan's: Llama-3.1-8B on an RTX 4090 at 4,016 tokens a request holds 9
// requests under vLLM's modelled reserve (1.85 GiB), 11 under the flat 1 GiB the
// search used to take, and 12 under SGLang's (0.30 GiB). Each server kind gets
// its own.
func TestRecordSearchStartUsesEngineReserve(t *testing.T) {
	for _, tc := range []struct {
		kind, reserve string
		start         string
	}{
		{"sglang", "sglang's modelled reserve", "starting at 12 concurrent requests"},
		{"vllm", "vllm's modelled reserve", "starting at 9 concurrent requests"},
		// A server whose engine is not known: vLLM's, as plan's default, and said.
		{"", "vllm's modelled reserve (the server's engine is unknown)", "starting at 9 concurrent requests"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			eng := enginetest.New(enginetest.Config{Model: "m", Kind: tc.kind, MaxModelLen: 8192, KVTokens: 1 << 20,
				TTFT: 20 * time.Millisecond, TokenGap: 5 * time.Millisecond})
			defer eng.Close()
			out := filepath.Join(t.TempDir(), "run.parquet")
			code, stdout, stderr := runCLI("record", "--url", eng.URL(), "--concurrency", "auto",
				"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "rtx-4090",
				"--prompt-tokens", "4000", "--output-tokens", "16", "--requests-per-level", "16", "--warmup", "0", "-o", out)
			live := stdout + stderr
			if code != exitOK {
				t.Fatalf("record: exit %d\n%s", code, live)
			}
			if !strings.Contains(live, tc.start) || !strings.Contains(live, tc.reserve) {
				t.Errorf("want the search %s, from %s:\n%s", tc.start, tc.reserve, live)
			}
		})
	}
}

// TestAnalyzeReserveIsTheRunsEngine (issue 28, item 4): analyze with
// --model-config and --gpu, given no --engine, models the reserve of the engine
// the run recorded (an SGLang server's here) and says which; --engine still
// chooses.
func TestAnalyzeReserveIsTheRunsEngine(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "sglang", KVTokens: 1 << 20})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "run.parquet")
	ceiling(t, "record", "--url", eng.URL(), "--concurrency", "1,2", "--requests-per-level", "4", "--prompt-tokens", "32", "--output-tokens", "4", "--warmup", "0", "-o", out)
	deploy := []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm"}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "reserve modelled from SGLang: "},
		{[]string{"--engine", "vllm"}, "reserve modelled from vLLM at max_num_batched_tokens 8,192"},
	} {
		text := ceiling(t, append(append([]string{"analyze", out}, deploy...), tc.flags...)...)
		if !strings.Contains(text, tc.want) {
			t.Errorf("analyze %v: lacks %q:\n%s", tc.flags, tc.want, text)
		}
	}
}
