package analyze

import (
	"context"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/engine"
)

// TestRunReserveIsTheRunsEngine (issue 28, item 4): with the reserve modelled
// for no engine in particular (the CLI without --engine), a run recorded from an
// SGLang server gets SGLang's modelled reserve (0.30 GiB on one GPU), a vLLM run
// vLLM's, and a run of an engine the model does not cover vLLM's with the
// fallback said; an engine chosen, or a flat reserve, is kept whatever the run.
func TestRunReserveIsTheRunsEngine(t *testing.T) {
	const gib = 1 << 30
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		kind    engine.Name
		reserve *capacity.ReserveInput
		// want: the assumption's start, what it must contain, the reserve in bytes
		// (0: not checked); model false: a flat reserve.
		prefix, contains string
		bytes            int64
		model            bool
	}{
		{"sglang run", engine.SGLang, &capacity.ReserveInput{}, "SGLang:", "", 3 * gib / 10, true},
		{"vllm run", engine.VLLM, &capacity.ReserveInput{}, "vLLM at", "", 0, true},
		{"llamacpp run", engine.LlamaCpp, &capacity.ReserveInput{}, "vLLM at", "the run's engine (llamacpp) has no reserve model: vLLM V1's is assumed", 0, true},
		{"unknown run", engine.Unknown, &capacity.ReserveInput{}, "vLLM at", "the run's engine is unknown", 0, true},
		{"sglang run, vllm chosen", engine.SGLang, &capacity.ReserveInput{Engine: capacity.EngineVLLM}, "vLLM at", "", 0, true},
		{"sglang run, flat reserve", engine.SGLang, nil, "", "", gib, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := knownInfo()
			info.Server.Kind = tc.kind
			path := writeTrace(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".parquet", info, knownRows())
			opt := Options{ModelConfig: "../samples/models/llama-3.1-8b.json", Resamples: -1,
				BudgetInput: capacity.BudgetInput{GPU: "h100-sxm", Utilization: 0.9, ReserveGiB: 1, Reserve: tc.reserve}}
			a, err := Analyze(context.Background(), []string{path}, opt)
			if err != nil {
				t.Fatal(err)
			}
			c := a.Runs[0].Capacity
			if c == nil || c.Budget == nil {
				t.Fatalf("no budget in the capacity: %+v", c)
			}
			b := c.Budget
			if !tc.model {
				if b.ReserveModel != nil {
					t.Errorf("a flat reserve, but the budget has a modelled one: %+v", *b.ReserveModel)
				}
			} else if m := b.ReserveModel; m == nil || !strings.HasPrefix(m.Assumption, tc.prefix) || !strings.Contains(m.Assumption, tc.contains) {
				t.Errorf("reserve model %+v: want its assumption to start %q and contain %q", m, tc.prefix, tc.contains)
			}
			if tc.bytes > 0 && b.ReserveBytes != tc.bytes {
				t.Errorf("reserve %d bytes, want %d", b.ReserveBytes, tc.bytes)
			}
			if tc.model && tc.contains == "" && strings.Contains(b.ReserveModel.Assumption, "is assumed") {
				t.Errorf("a modelled engine's reserve says it fell back: %q", b.ReserveModel.Assumption)
			}
		})
	}
}

// TestWhatIfReserveIsTheRunsEngine: a what-if of an SGLang run models the
// measured and the changed deployment with SGLang's reserve, as its capacity: its
// predicted KV capacity is the plan's under SGLang's reserve, not vLLM's.
func TestWhatIfReserveIsTheRunsEngine(t *testing.T) {
	info := knownInfo()
	info.Server.Kind = engine.SGLang
	info.Server.KVCapacityTokens = nil // the capacity is the model's
	path := writeTrace(t, t.TempDir(), "sglang.parquet", info, knownRows())
	cfg, err := capacity.LoadModelConfig("../samples/models/llama-3.1-8b.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, eng := range []string{"", capacity.EngineVLLM} {
		in := capacity.BudgetInput{GPU: "h100-sxm", Utilization: 0.9, Reserve: &capacity.ReserveInput{Engine: eng}}
		opt := Options{ModelConfig: "../samples/models/llama-3.1-8b.json", Resamples: -1, BudgetInput: in}
		a, err := Analyze(context.Background(), []string{path}, opt)
		if err != nil {
			t.Fatal(err)
		}
		res, err := WhatIf(&a.Runs[0], opt, WhatIfChange{KVDtype: "fp8"})
		if err != nil {
			t.Fatal(err)
		}
		want := in
		want.KVDtype = "fp8"
		want.Reserve = &capacity.ReserveInput{Engine: capacity.EngineSGLang}
		if eng != "" {
			want.Reserve.Engine = eng
		}
		p, err := capacity.PlanBudget(cfg, want)
		if err != nil {
			t.Fatal(err)
		}
		var got int64 = -1
		for _, row := range res.Rows {
			if row.Predicted {
				got = row.KVCapacityTokens
			}
		}
		if got != p.KVTokens {
			t.Errorf("engine %q: predicted KV capacity %d tokens, want %d (the plan under %s's reserve)", eng, got, p.KVTokens, want.Reserve.Engine)
		}
	}
}
