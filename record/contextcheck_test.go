package record

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// completions counts the completion requests the engine received.
func completions(eng *enginetest.Server) int {
	n := 0
	for _, e := range eng.Log() {
		if e.Endpoint == "chat" || e.Endpoint == "completions" {
			n++
		}
	}
	return n
}

// TestPreflightRefusesAWorkloadOverTheContext: a workload longer than the context
// the probe learned is refused before any completion request, with the reason and
// the fix; one whose tail only crosses it is a warning. Before, the recorder sent
// thousands of requests that all failed with HTTP 400.
func TestPreflightRefusesAWorkloadOverTheContext(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cfg            enginetest.Config
		prompt, output int
		prompts        string
		want           []string // in the refusal; nil: the run goes ahead
		warn           string
	}{
		{"llama.cpp, -c 512 -np 4", enginetest.Config{Kind: "llamacpp", MaxModelLen: 128, Slots: 4}, 256, 128, "",
			[]string{"does not fit the server's context", "1000 of the 1000 requests", "more than the 128 tokens a llama.cpp slot holds (n_ctx per slot, 4 slots)", "be refused (HTTP 400", "nothing was sent", "Fix:", "larger -c"}, ""},
		{"llama.cpp, outputs over the slot", enginetest.Config{Kind: "llamacpp", MaxModelLen: 128, Slots: 4}, 60, 100, "",
			[]string{"a 60-token prompt + max_tokens 100 = 160", "output cut at the context's end"}, ""},
		{"vLLM max_model_len", enginetest.Config{Kind: "vllm", MaxModelLen: 300}, 256, 128, "",
			[]string{"more than the 300 tokens of the server's max_model_len", "--max-model-len"}, ""},
		{"fits", enginetest.Config{Kind: "vllm", MaxModelLen: 400}, 256, 128, "", nil, ""},
		{"a lognormal tail crosses it", enginetest.Config{Kind: "vllm", MaxModelLen: 400}, 0, 8, "lognormal:60,0.6", nil, "need more than the 400 tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Model = "m"
			eng := enginetest.New(tc.cfg)
			defer eng.Close()
			o := baseOptions(t, eng.URL())
			o.PromptTokens, o.OutputTokens, o.PromptLengths = tc.prompt, tc.output, tc.prompts
			o.MetricsURL = "off"
			info, err := Record(context.Background(), o)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				warned := strings.Join(info.Warnings, "\n")
				if tc.warn != "" && !strings.Contains(warned, tc.warn) || tc.warn == "" && strings.Contains(warned, "need more than") {
					t.Errorf("warnings %q, want %q", warned, tc.warn)
				}
				return
			}
			if err == nil {
				t.Fatal("the workload was not refused")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q lacks %q", err, w)
				}
			}
			if n := completions(eng); n != 0 {
				t.Errorf("%d completion requests sent before the refusal", n)
			}
			if _, serr := os.Stat(o.Output); serr == nil {
				t.Error("a trace was written for a refused workload")
			}
		})
	}
}

// TestLevelThatFailsEverythingStops: when the first requests of a level all fail,
// the level stops (kept in the trace, with its rows and the server's error text),
// and so does the sweep, instead of sending every planned request to fail.
func TestLevelThatFailsEverythingStops(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", Fault: func(i int64) enginetest.Fault {
		if i == 0 {
			return enginetest.FaultNone // the probe request
		}
		return enginetest.FaultInternal
	}})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{2, 4}
	o.RequestsPerLevel = 200
	o.MetricsURL = "off"
	o.Timeout = 5 * time.Second
	var progress syncBuffer
	o.Progress = &progress
	info, err := Record(context.Background(), o)
	if !errors.Is(err, ErrLevelFailed) {
		t.Fatalf("error %v, want ErrLevelFailed", err)
	}
	// One numbering (issue 27): the progress line and the stop message name the
	// level by the number stored in the trace, which analyze's tables use.
	out := progress.String()
	if !strings.Contains(out, "level 0 (1 of 2)") || !strings.Contains(out, "level 0 stopped") || strings.Contains(out, "level 1") {
		t.Errorf("progress numbers the failed level two ways (want level 0 throughout):\n%s", out)
	}
	for _, w := range []string{"level 0 (c=2)", "requests all failed, the first with: HTTP 500", "internal server error (injected)", "kept in the trace"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if len(info.Levels) != 1 || !strings.Contains(info.Levels[0].StopReason, "all failed") {
		t.Fatalf("levels %+v: want level 0 kept with its stop reason", info.Levels)
	}
	rows, stored := readTrace(t, o.Output)
	if len(rows) < 8 || len(rows) > 12 || len(stored.Levels) != 1 {
		t.Errorf("trace holds %d rows and %d levels, want level 0's 8 to 12 failed requests", len(rows), len(stored.Levels))
	}
	if n := completions(eng); n > 13 {
		t.Errorf("%d completion requests sent: the level did not stop", n)
	}
}

// TestContextAdviceIsTheEngines: a workload over the context is told in the
// engine's own terms (package engine): a llama.cpp slot's n_ctx and its -c / -np
// flags, whose answer is a cut output; else max_model_len and each engine's flag,
// and a refusal.
func TestContextAdviceIsTheEngines(t *testing.T) {
	n, slots := int64(512), int64(4)
	llama := trace.ServerInfo{Kind: engine.LlamaCpp, NCtx: &n, Slots: &slots}
	where, fix := contextWords(llama, 512)
	if !strings.Contains(where, "llama.cpp slot holds (n_ctx per slot, 4 slots)") || !strings.Contains(fix, "fewer -np slots") {
		t.Errorf("llama.cpp: %q / %q", where, fix)
	}
	if c := consequence(llama, contextFit{over: 4, promptOverOnly: 0}); !strings.Contains(c, "cut at the context's end (llama.cpp stops") {
		t.Errorf("llama.cpp consequence %q", c)
	}
	vllm := trace.ServerInfo{Kind: engine.VLLM, NCtx: &n}
	where, fix = contextWords(vllm, 512)
	if !strings.Contains(where, "max_model_len") || !strings.Contains(fix, "--max-model-len") {
		t.Errorf("vLLM: %q / %q", where, fix)
	}
	if c := consequence(vllm, contextFit{over: 4}); !strings.Contains(c, "refused") {
		t.Errorf("vLLM consequence %q", c)
	}
}
