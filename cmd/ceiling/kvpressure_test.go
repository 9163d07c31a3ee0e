package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// Requests of the KV-pressure sweeps: 40 prompt + 160 output tokens, 200 in all
// (13 vLLM blocks of 16).
const (
	pressurePrompt = 40
	pressureOutput = 160
)

// pressureSweep records the levels against eng and analyzes the trace with the
// capacity flags that model kvTestTokens.
func pressureSweep(t *testing.T, eng *enginetest.Server, levels string, requests int) analyze.Run {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "pressure.parquet")
	ceiling(t, "record", "--url", eng.URL(), "--concurrency", levels, "--requests-per-level", fmt.Sprint(requests),
		"--prompt-tokens", fmt.Sprint(pressurePrompt), "--output-tokens", fmt.Sprint(pressureOutput), "--ignore-eos",
		"--scrape-interval", "20ms", "-o", trace)
	var a analyze.Analysis
	args := append([]string{"analyze", trace, "--format", "json"}, kvCapFlags("../../samples/models/llama-3.1-8b.json")...)
	if err := json.Unmarshal([]byte(ceiling(t, args...)), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 1 {
		t.Fatalf("%d runs", len(a.Runs))
	}
	return a.Runs[0]
}

// TestEngineKVPressureVerdict sweeps the test engine's vLLM and SGLang step
// schedulers, whose caches of kvTestTokens (what the capacity flags model) hold
// 2048 / 200 ≈ 10 requests, across levels 4 and 8 (which fit) and 16 and 32 (which
// do not): the server counters show preemptions (retractions) at and only at the
// overflowing levels, the server's limit and the verdict name the KV cache, and the
// modelled, declared and observed capacities agree.
func TestEngineKVPressureVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("records four levels against a step scheduler")
	}
	for _, sched := range []string{enginetest.SchedulerVLLM, enginetest.SchedulerSGLang} {
		t.Run(sched, func(t *testing.T) {
			eng := enginetest.New(enginetest.Config{Model: "m", Scheduler: sched, KVTokens: kvTestTokens,
				StepTime: time.Millisecond, TokenTime: 5 * time.Microsecond, WaitingTime: 500 * time.Nanosecond})
			defer eng.Close()
			r := pressureSweep(t, eng, "4,8,16,32", 64)
			if eng.Preemptions() == 0 {
				t.Fatalf("the engine never preempted: the sweep did not reach the regime")
			}
			for _, l := range r.Levels {
				s := l.Server
				if s == nil || s.Preemptions == nil {
					t.Fatalf("level %d: no preemption figure in the server counters: %+v", l.Level, s)
				}
				over := l.Concurrency*(pressurePrompt+pressureOutput) > kvTestTokens
				if got := *s.Preemptions > 0; got != over {
					t.Errorf("level %d (c=%d): %v preemptions; want some exactly when %d × %d tokens exceed the %d-token cache",
						l.Level, l.Concurrency, *s.Preemptions, l.Concurrency, pressurePrompt+pressureOutput, kvTestTokens)
				}
				t.Logf("c=%d: %.0f tok/s, server running %.1f, KV max %s, preemptions %v", l.Concurrency, l.OutputTokS, derefOr(s.RunningMean), pctOf(s.KVUsageMax), *s.Preemptions)
			}
			k := r.KVCheck
			if k == nil || k.Agree == nil || !*k.Agree || k.ObservedTokens == nil || k.DeclaredTokens == nil || k.ModelledTokens == nil {
				t.Errorf("KV check %+v, want three figures that agree", k)
			} else {
				t.Logf("KV check: %s", k.Verdict)
			}
			if b := r.ServerBinding; b == nil || b.Limit != "kv" {
				t.Errorf("server binding %+v, want kv", b)
			}
			if r.Ceiling.Binding != "kv" {
				t.Errorf("ceiling bound by %q, want kv; evidence:\n%s", r.Ceiling.Binding, strings.Join(r.Ceiling.Evidence, "\n"))
			}
		})
	}
}

// TestEngineBatchLimitVerdict: the same engines with a cache far larger than the
// sweep needs and a running cap of 4 (vLLM max_num_seqs, SGLang
// max_running_requests): nothing is preempted and the verdict names the batch limit.
func TestEngineBatchLimitVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("records four levels against a step scheduler")
	}
	for _, sched := range []string{enginetest.SchedulerVLLM, enginetest.SchedulerSGLang} {
		t.Run(sched, func(t *testing.T) {
			eng := enginetest.New(enginetest.Config{Model: "m", Scheduler: sched, KVTokens: 1 << 16, Slots: 4,
				StepTime: time.Millisecond, TokenTime: 5 * time.Microsecond, WaitingTime: 500 * time.Nanosecond})
			defer eng.Close()
			r := pressureSweep(t, eng, "2,4,8", 32)
			if eng.Preemptions() != 0 {
				t.Errorf("%d preemptions with a cache of 65,536 tokens", eng.Preemptions())
			}
			for _, l := range r.Levels {
				if s := l.Server; s != nil && s.RunningMax != nil && *s.RunningMax > 4 {
					t.Errorf("c=%d: server running up to %v, above the cap of 4", l.Concurrency, *s.RunningMax)
				}
			}
			if r.Ceiling.Binding != "batch" {
				t.Errorf("ceiling bound by %q, want batch; evidence:\n%s", r.Ceiling.Binding, strings.Join(r.Ceiling.Evidence, "\n"))
			}
		})
	}
}

func derefOr(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}

func pctOf(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}
