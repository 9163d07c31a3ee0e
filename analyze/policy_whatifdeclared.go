package analyze

import (
	"errors"
	"fmt"
	"math"
)

// A KV-only what-if from the server's own figure. Other request lengths or another
// max_model_len change how many requests the KV cache holds, not its size: where
// the server declared its capacity (vLLM's KV cache tokens, SGLang's
// max_total_num_tokens, llama.cpp's n_ctx), that figure divided by the new request
// length is the new KV ceiling, with no model config or GPU needed. Throughput is
// not predicted: the roofline needs the model and the GPU.

// KVOnly says whether the change touches the workload's lengths or max_model_len
// only: a what-if the server's declared KV capacity answers without the model.
func (ch WhatIfChange) KVOnly() bool {
	return ch.KVDtype == "" && ch.WeightDtype == "" && ch.GPU == "" && ch.GPUs == 0 && ch.TP == 0 && ch.DP == 0 && ch.PP == 0 && ch.EP == nil &&
		(ch.PromptTokens > 0 || ch.OutputTokens > 0 || ch.MaxModelLen > 0)
}

// whatIfDeclared predicts a KV-only change from the run's declared KV capacity
// (per cache; opt's shape gives the caches, one without it). An error naming
// Options.ModelConfig where the change is not KV-only or the server declared no
// capacity.
func whatIfDeclared(r *Run, opt Options, change WhatIfChange) (*WhatIfResult, error) {
	if !change.KVOnly() {
		return nil, errors.New("what-if of a KV dtype, precision, GPU or shape needs Options.ModelConfig and BudgetInput.GPU (the capacity model of the measured run); a change of request lengths or max_model_len alone works from the server's declared KV capacity")
	}
	c := r.Capacity
	if c == nil || c.DeclaredKVCapacityTokens == nil || *c.DeclaredKVCapacityTokens <= 0 {
		return nil, errors.New("the server declared no KV capacity: a what-if needs Options.ModelConfig and BudgetInput.GPU (the capacity model of the measured run)")
	}
	perCache := *c.DeclaredKVCapacityTokens
	caches := int64(opt.Shape().KVCaches())
	prompt, output := meanLengths(r)
	if math.IsNaN(prompt) || output <= 0 {
		return nil, errors.New("the run's request lengths are unknown: nothing to scale the declared KV capacity by")
	}
	mml := int64(0)
	if c.MaxModelLen != nil {
		mml = *c.MaxModelLen
	}
	measured := WhatIfRow{Scenario: "measured", Shape: opt.Shape().String(), GPU: opt.GPU, RequestTokens: prompt + output, MaxModelLen: mml,
		KVCapacityTokens: perCache * caches, KVCeiling: float64(perCache*caches) / (prompt + output), Ceiling: r.Ceiling.Concurrency, Basis: "measured"}
	if mml > 0 {
		measured.AtMaxModelLen = pf(float64(perCache) / float64(mml))
	}
	if a := r.Decision; a != nil && a.AtCeiling != nil {
		measured.OutputTokS = pf(a.AtCeiling.OutputTokS)
	}
	pred := measured
	pred.Predicted, pred.OutputTokS = true, nil
	var names []string
	if change.PromptTokens > 0 {
		prompt = change.PromptTokens
		names = append(names, fmt.Sprintf("--to-prompt-tokens %.0f", prompt))
	}
	if change.OutputTokens > 0 {
		output = change.OutputTokens
		names = append(names, fmt.Sprintf("--to-output-tokens %.0f", output))
	}
	if change.MaxModelLen > 0 {
		mml = change.MaxModelLen
		names = append(names, fmt.Sprintf("--to-max-model-len %d", mml))
	}
	pred.Scenario = joinComma(names)
	pred.RequestTokens, pred.MaxModelLen = prompt+output, mml
	pred.KVCeiling = float64(perCache*caches) / (prompt + output)
	pred.AtMaxModelLen = nil
	if mml > 0 {
		pred.AtMaxModelLen = pf(float64(perCache) / float64(mml))
	}
	ceiling := pred.KVCeiling
	pred.Basis = fmt.Sprintf("KV ceiling from the server-declared capacity (%s tokens per cache) ÷ the request's tokens; no model config: sliding windows and per-request states are not modelled", num(float64(perCache)))
	for _, lim := range []struct {
		name string
		v    *float64
	}{{"batch limit", r.Ceilings.Batch}, {"knee", r.Ceilings.Knee}} {
		if lim.v != nil && *lim.v < ceiling {
			ceiling = *lim.v
			pred.Basis += fmt.Sprintf("; the measured %s (%.1f) carries over: same deployment", lim.name, *lim.v)
		}
	}
	pred.Ceiling = nil
	if ceiling >= 1 {
		pred.Ceiling = &ceiling
	}
	res := &WhatIfResult{Predicted: true, RunID: r.RunID, Change: pred.Scenario, Rows: []WhatIfRow{measured, pred}, Levels: []LevelPrediction{},
		Model:          "KV-only: the server-declared KV capacity divided by the changed request length",
		IntervalMethod: "none: the declared capacity is the server's own figure",
		Notes:          []string{"KV-only what-if from the server-declared KV capacity: throughput and latencies are not predicted without the model config and GPU (the roofline needs them)"}}
	markProvenance(res, r)
	return res, nil
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}
