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

// TestEngineLlamaCacheFailures sweeps the test engine's llama.cpp imitations. With a
// unified cache of 1000 cells and 4 slots, requests of 100 + 200 tokens fit three at
// a time: levels 1 and 2 succeed, and at 4 the batch fails with llama.cpp's
// "Context size has been exceeded.", which the analysis names kv_exhausted with the
// server's text. With per-slot caches of 250 cells the same requests are cut at the
// slot's context (finish length, no failure), and a prompt of 300 is refused as
// context_exceeded.
func TestEngineLlamaCacheFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("records against a step scheduler")
	}
	analyzeTrace := func(t *testing.T, trace string) analyze.Run {
		t.Helper()
		var a analyze.Analysis
		if err := json.Unmarshal([]byte(ceiling(t, "analyze", trace, "--format", "json")), &a); err != nil {
			t.Fatal(err)
		}
		return a.Runs[0]
	}
	cfg := enginetest.Config{Model: "m", KVTokens: 1000, Slots: 4, StepTime: 500 * time.Microsecond, TokenTime: 5 * time.Microsecond}

	t.Run("unified", func(t *testing.T) {
		cfg := cfg
		cfg.Scheduler = enginetest.SchedulerLlamaUnified
		eng := enginetest.New(cfg)
		defer eng.Close()
		trace := filepath.Join(t.TempDir(), "unified.parquet")
		ceiling(t, "record", "--url", eng.URL(), "--concurrency", "1,2,4", "--requests-per-level", "16",
			"--prompt-tokens", "100", "--output-tokens", "200", "--ignore-eos", "--scrape-interval", "20ms", "-o", trace)
		r := analyzeTrace(t, trace)
		for _, l := range r.Levels {
			t.Logf("c=%d: %d of %d failed %v, %.0f tok/s", l.Concurrency, l.Errors, l.Requests, l.ErrorKinds, l.OutputTokS)
			kv := l.ErrorKinds[analyze.KindKVExhausted]
			if over := l.Concurrency*300 > 1000; over != (kv > 0) || kv != l.Errors {
				t.Errorf("c=%d: %d errors, %d kv_exhausted (%v); want all errors kv_exhausted, and some exactly past 3 requests", l.Concurrency, l.Errors, kv, l.ErrorKinds)
			}
			for _, g := range l.ErrorGroups {
				if g.Kind == analyze.KindKVExhausted && !strings.Contains(g.Message, "Context size has been exceeded.") {
					t.Errorf("c=%d: kv_exhausted group says %q, want the server's text", l.Concurrency, g.Message)
				}
			}
		}
	})

	t.Run("slots", func(t *testing.T) {
		cfg := cfg
		cfg.Scheduler = enginetest.SchedulerLlamaSlots
		eng := enginetest.New(cfg)
		defer eng.Close()
		dir := t.TempDir()
		fits := filepath.Join(dir, "fits.parquet")
		ceiling(t, "record", "--url", eng.URL(), "--concurrency", "2,4,8", "--requests-per-level", "16",
			"--prompt-tokens", "100", "--output-tokens", "200", "--ignore-eos", "--scrape-interval", "20ms", "-o", fits)
		for _, l := range analyzeTrace(t, fits).Levels {
			if l.Errors != 0 || l.MeanOutputTokens > 150 {
				t.Errorf("c=%d: %d errors, %.0f output tokens; want none and at most the slot's 150", l.Concurrency, l.Errors, l.MeanOutputTokens)
			}
		}
		long := filepath.Join(dir, "long.parquet")
		runCLI("record", "--url", eng.URL(), "--concurrency", "1", "--requests-per-level", "4",
			"--prompt-tokens", "300", "--output-tokens", "10", "--ignore-eos", "-o", long)
		r := analyzeTrace(t, long)
		if l := r.Levels[0]; l.ErrorKinds[analyze.KindContextExceeded] == 0 {
			t.Errorf("prompts of 300 in slots of 250: error kinds %v, want context_exceeded", l.ErrorKinds)
		}
	})
}
