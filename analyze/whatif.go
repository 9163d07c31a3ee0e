package analyze

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/capacity"
)

// What-if: predictions from one measured sweep, never mixed with its measurements.
// The KV ceiling comes from the capacity model at the changed setting; the measured
// batch limit and knee carry over only where the shape is unchanged; the measured
// share of the roofline at the ceiling scales the predicted roofline throughput.

// WhatIfChange is one changed setting; zero fields keep the measured run's.
type WhatIfChange struct {
	PromptTokens, OutputTokens float64
	MaxModelLen                int64
	KVDtype                    string
	GPU                        string
	GPUs, TP, DP, PP           int
	EP                         *bool
}

// WhatIfRow is one row of the what-if table: the measured run (Predicted false) or a
// prediction.
type WhatIfRow struct {
	Scenario         string   `json:"scenario"`
	Predicted        bool     `json:"predicted"`
	Shape            string   `json:"shape"`
	GPU              string   `json:"gpu"`
	RequestTokens    float64  `json:"request_tokens"`
	KVCapacityTokens int64    `json:"kv_capacity_tokens"` // all caches
	KVCeiling        float64  `json:"kv_ceiling"`
	AtMaxModelLen    *float64 `json:"per_cache_at_max_model_len"`
	MaxModelLen      int64    `json:"max_model_len"`
	// Ceiling is the realistic ceiling: measured, or predicted as the KV ceiling capped
	// by the measured batch limit and knee where they carry over.
	Ceiling    *float64 `json:"ceiling"`
	OutputTokS *float64 `json:"output_tok_s"` // at the ceiling
	Basis      string   `json:"basis"`        // how the prediction was made
}

// WhatIf predicts the run under change, beside the measured row. opt is what the run
// was analyzed with (it needs the model config and a catalog GPU).
func WhatIf(r *Run, opt Options, change WhatIfChange) ([]WhatIfRow, error) {
	if opt.ModelConfig == "" || (opt.GPU == "" && opt.MemoryGiB <= 0) {
		return nil, fmt.Errorf("what-if needs --model-config and --gpu (the capacity model of the measured run)")
	}
	cfg, err := capacity.LoadModelConfig(opt.ModelConfig)
	if err != nil {
		return nil, err
	}
	base, err := capacity.PlanBudget(cfg, opt.BudgetInput)
	if err != nil {
		return nil, fmt.Errorf("capacity model of the measured run: %w", err)
	}
	c := r.Capacity
	reqTokens := 0.0
	if c != nil && c.MeanRequestTokens != nil {
		reqTokens = *c.MeanRequestTokens
	}
	prompt, output := meanLengths(r)
	mml := int64(0)
	if c != nil && c.MaxModelLen != nil {
		mml = *c.MaxModelLen
	}
	measured := WhatIfRow{Scenario: "measured", Shape: base.Shape.String(), GPU: opt.GPU, RequestTokens: reqTokens, MaxModelLen: mml, Basis: "measured"}
	if c != nil && c.KVCapacityTokens != nil {
		measured.KVCapacityTokens = *c.KVCapacityTokens * int64(base.Shape.KVCaches())
	}
	if r.Ceilings.KV != nil {
		measured.KVCeiling = *r.Ceilings.KV
	}
	if mml > 0 && measured.KVCapacityTokens > 0 {
		v := float64(measured.KVCapacityTokens) / float64(base.Shape.KVCaches()) / float64(mml)
		measured.AtMaxModelLen = &v
	}
	measured.Ceiling = r.Ceiling.Concurrency
	var ratio float64 // measured ÷ roofline at the ceiling
	if a := r.Decision; a != nil && a.AtCeiling != nil {
		v := a.AtCeiling.OutputTokS
		measured.OutputTokS = &v
		if a.AtCeiling.PctRoofline != nil {
			ratio = *a.AtCeiling.PctRoofline / 100
		}
	}

	in := opt.BudgetInput
	name := ""
	add := func(s string) {
		if name != "" {
			name += ", "
		}
		name += s
	}
	if change.KVDtype != "" {
		in.KVDtype = change.KVDtype
		add("--kv-dtype " + change.KVDtype)
	}
	shapeChanged := false
	if change.GPU != "" {
		in.GPU, in.MemoryGiB = change.GPU, 0
		add("--gpu " + change.GPU)
		shapeChanged = true
	}
	for _, f := range []struct {
		flag string
		v    int
		dst  *int
	}{{"--gpus", change.GPUs, &in.GPUs}, {"--tp", change.TP, &in.TP}, {"--dp", change.DP, &in.DP}, {"--pp", change.PP, &in.PP}} {
		if f.v > 0 {
			*f.dst = f.v
			add(fmt.Sprintf("%s %d", f.flag, f.v))
			shapeChanged = true
		}
	}
	if change.EP != nil {
		in.EP = *change.EP
		add(fmt.Sprintf("--ep=%t", *change.EP))
		shapeChanged = true
	}
	if change.TP == 0 && (change.GPUs > 0 || change.DP > 0 || change.PP > 0) {
		in.TP = 0 // one engine over the new GPU count
	}
	if in.WeightsGiB > 0 && base.Weights != nil && shapeChanged {
		// Carry the measured weights over by the estimate's ratio.
		if err := in.CheckShape(); err != nil {
			return nil, err
		}
		in.WeightsGiB = float64(capacity.WeightsPerGPU(*base.Weights, in.Shape())) * base.WeightsScale / float64(1<<30)
	}
	if change.PromptTokens > 0 {
		prompt = change.PromptTokens
		add(fmt.Sprintf("--prompt-tokens %.0f", prompt))
	}
	if change.OutputTokens > 0 {
		output = change.OutputTokens
		add(fmt.Sprintf("--output-tokens %.0f", output))
	}
	if change.MaxModelLen > 0 {
		mml = change.MaxModelLen
		add(fmt.Sprintf("--max-model-len %d", mml))
	}
	if name == "" {
		return []WhatIfRow{measured}, nil
	}
	p, err := capacity.PlanBudget(cfg, in)
	if p == nil {
		return nil, err
	}
	pred := WhatIfRow{Scenario: name, Predicted: true, Shape: p.Shape.String(), GPU: in.GPU, RequestTokens: prompt + output, MaxModelLen: mml}
	if err != nil {
		pred.Basis = fmt.Sprintf("does not fit: %v", err)
		return []WhatIfRow{measured, pred}, nil
	}
	// Where the server measured its KV capacity, the modelled change is applied to it.
	scale := 1.0
	if c != nil && c.DeclaredKVCapacityTokens != nil && base.KVTokens > 0 {
		scale = float64(*c.DeclaredKVCapacityTokens) / float64(base.KVTokens)
	}
	perCache := float64(p.KVTokens) * scale
	pred.KVCapacityTokens = int64(perCache) * int64(p.Shape.KVCaches())
	pred.KVCeiling = p.Concurrency(prompt+output) * scale
	if mml > 0 {
		v := p.FitsOnce(float64(mml)) * scale
		pred.AtMaxModelLen = &v
	}
	ceiling := pred.KVCeiling
	pred.Basis = "KV ceiling from the capacity model"
	if scale != 1 {
		pred.Basis += fmt.Sprintf(" (scaled by the measured ÷ modelled capacity, %.2f)", scale)
	}
	if !shapeChanged {
		for _, lim := range []struct {
			name string
			v    *float64
		}{{"batch limit", r.Ceilings.Batch}, {"knee", r.Ceilings.Knee}} {
			if lim.v != nil && *lim.v < ceiling {
				ceiling = *lim.v
				pred.Basis += fmt.Sprintf("; the measured %s (%.1f) carries over: same shape", lim.name, *lim.v)
			}
		}
	} else {
		pred.Basis += "; the measured batch limit and knee do not carry over to another shape or GPU"
	}
	if ceiling >= 1 {
		pred.Ceiling = &ceiling
	}
	if roof, err := capacity.NewRoofline(p); err == nil && ratio > 0 && pred.Ceiling != nil {
		v := ratio * roof.At(ceiling, prompt+output/2).TotalTokS
		pred.OutputTokS = &v
		pred.Basis += fmt.Sprintf("; throughput = %.0f%% (measured share of the roofline) × the roofline there", ratio*100)
	}
	return []WhatIfRow{measured, pred}, nil
}

// meanLengths are the run's mean prompt and output tokens over its levels.
func meanLengths(r *Run) (prompt, output float64) {
	n := 0.0
	for _, l := range r.Levels {
		if l.MeanOutputTokens > 0 {
			prompt += l.MeanPromptTokens
			output += l.MeanOutputTokens
			n++
		}
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return prompt / n, output / n
}
