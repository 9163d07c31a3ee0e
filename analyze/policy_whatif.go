package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/prediction"
)

// What-if: predictions from one measured sweep, never mixed with its measurements.
// The KV ceiling comes from the capacity model at the changed setting; the measured
// batch limit and knee carry over only where the shape is unchanged; the measured
// share of the roofline at the ceiling scales the predicted roofline throughput.

// Kinds are the kinds of change the what-if crosses from a run measured on
// measuredGPU (a catalog name), for its interval: another GPU, NVIDIA's or
// involving AMD's; another weight or KV precision or shape; other request lengths; a
// maximum model length alone changes only the batch the KV cache holds (another
// concurrency).
func (c WhatIfChange) Kinds(measuredGPU string) []prediction.ChangeKind {
	var k []prediction.ChangeKind
	if c.GPU != "" {
		k = append(k, gpuChangeKind(measuredGPU, c.GPU))
	}
	if c.WeightDtype != "" || c.KVDtype != "" || c.GPUs > 0 || c.TP > 0 || c.DP > 0 || c.PP > 0 || c.EP != nil {
		k = append(k, prediction.ChangePrecision)
	}
	if c.PromptTokens > 0 || c.OutputTokens > 0 {
		k = append(k, prediction.ChangeLengths)
	}
	if len(k) == 0 {
		k = append(k, prediction.ChangeConcurrency)
	}
	return k
}

// gpuChangeKind is the kind of a move from GPU from to GPU to: the AMD kind
// where either is AMD's, else NVIDIA's. A name the catalog lacks counts as AMD's,
// the wider interval: a prediction on it has no roofline anyway, and the narrower
// kind must never be the one that misleads.
func gpuChangeKind(from, to string) prediction.ChangeKind {
	for _, name := range []string{from, to} {
		if g, err := capacity.LookupGPU(name); err != nil || g.Vendor() != "nvidia" {
			return prediction.ChangeGPUAMD
		}
	}
	return prediction.ChangeGPU
}

// WhatIf predicts the run under change: the ceiling beside the measured one, and
// every measured level. opt is what the run was analyzed with (it needs the model
// config and a catalog GPU).
func WhatIf(r *Run, opt Options, change WhatIfChange) (*WhatIfResult, error) {
	if opt.ModelConfig == "" {
		return whatIfDeclared(r, opt, change) // KV-only, from the server's figure (policy_whatifdeclared.go)
	}
	rows, curve, err := whatIf(r, opt, change)
	if err != nil {
		return nil, err
	}
	interval := prediction.IntervalFor(change.Kinds(opt.GPU)...)
	res := &WhatIfResult{Predicted: true, RunID: r.RunID, Rows: rows, Levels: []LevelPrediction{}, Notes: []string{},
		Model:          "each level's measured share of its roofline with prefill (its step less a fixed step overhead, more per pipeline stage), times the changed deployment's roofline at the same concurrency, plus the changed deployment's overhead (docs/predictions.md)",
		IntervalMethod: IntervalMethod(interval), Interval: interval}
	if len(rows) > 1 {
		res.Change = rows[1].Scenario
	}
	if change.GPU != "" || change.WeightDtype != "" || change.GPUs > 0 || change.TP > 0 || change.DP > 0 || change.PP > 0 || change.EP != nil {
		res.Notes = append(res.Notes, "another GPU, precision or shape: the share of the roofline carries between kernels and GPUs only roughly, so the intervals are wide: they are sized on how far such predictions missed public measurements (docs/validation.md). The prediction assumes the measured engine and release on the new deployment: between releases of one engine the public shares moved by 9–41% at the median and up to 4.8× at a single level (docs/validation.md, section 5). Measure before buying")
	}
	switch {
	case curve.note != "":
		res.Notes = append(res.Notes, curve.note)
	case curve.model != nil:
		m := *curve.model
		m.Interval = interval
		res.Levels = PredictCurve(m)
	}
	markProvenance(res, r)
	return res, nil
}

// whatIfPrefix is the shared prefix of the predicted workload: the change's, else
// the measured run's where its KV ceiling counted one, in the run's blocks
// (vLLM's 16 when the run says none).
func whatIfPrefix(c *Capacity, change WhatIfChange, prompt float64) capacity.SharedPrefix {
	s := capacity.SharedPrefix{Prefixes: 1, BlockTokens: capacity.DefaultPrefixBlock}
	if c != nil && c.PrefixSharing != nil && c.PrefixSharing.BlockTokens > 0 {
		s.BlockTokens, s.Prefixes = c.PrefixSharing.BlockTokens, max(c.PrefixSharing.Prefixes, 1)
	}
	switch {
	case change.PrefixTokens > 0:
		s.Tokens = change.PrefixTokens
	case change.PrefixHitRate > 0:
		s.Tokens = math.Floor(change.PrefixHitRate * prompt)
	case c != nil && c.PrefixSharing != nil && c.PrefixSharing.Credited:
		s.Tokens = c.PrefixSharing.CountedTokens
	}
	return s
}

// prefixRefused says why the run's engine gets no credit for shared prefixes
// ("" when it shares them across requests, package engine's Prefix, or is not
// known: then the flag that asks for the prefix is taken at its word, and assumed
// says so).
func prefixRefused(r *Run) (why, assumed string) {
	var sm serverMeta
	_ = json.Unmarshal(r.Server, &sm) // a run without server facts: the engine is unknown
	e, ok := engine.Of(sm.Kind)
	switch {
	case sm.Kind == engine.LlamaCpp:
		return "llama.cpp shares no prefix across requests (each slot keeps its own copy)", ""
	case !ok:
		return "", " (the run's engine is not known: assumed to share prefixes as vLLM and SGLang do)"
	case e.Prefix == nil:
		return e.Title + " is not known to share prefixes across requests", ""
	}
	return "", ""
}

// curveResult is the whole-curve model whatIf prepares, or why it could not.
type curveResult struct {
	model *CurveModel
	note  string
}

func whatIf(r *Run, opt Options, change WhatIfChange) ([]WhatIfRow, curveResult, error) {
	var curve curveResult
	if opt.ModelConfig == "" || (opt.GPU == "" && opt.MemoryGiB <= 0) {
		return nil, curve, errors.New("what-if needs Options.ModelConfig and BudgetInput.GPU (the capacity model of the measured run)")
	}
	// The deployment the run was analyzed with (computed once, config.json parsed
	// once), with the reserve of the run's engine as its capacity has.
	opt, _ = runReserve(opt, runKind(r))
	if err := opt.Prepare(); err != nil {
		return nil, curve, err
	}
	cfg := opt.Deployment.Config
	base, err := opt.Deployment.Plan, opt.Deployment.PlanErr
	if err != nil {
		return nil, curve, fmt.Errorf("capacity model of the measured run: %w", err)
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
	if a := r.Decision; a != nil && a.AtCeiling != nil {
		v := a.AtCeiling.OutputTokS
		measured.OutputTokS = &v
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
		add("--to-kv-dtype " + change.KVDtype)
	}
	shapeChanged, dtypeChanged := false, false
	if change.WeightDtype != "" {
		in.WeightDtype = change.WeightDtype
		add("--to-weight-dtype " + change.WeightDtype)
		dtypeChanged = true
	}
	if change.GPU != "" {
		in.GPU, in.MemoryGiB = change.GPU, 0
		add("--to-gpu " + change.GPU)
		shapeChanged = true
	}
	for _, f := range []struct {
		flag string
		v    int
		dst  *int
	}{{"--to-gpus", change.GPUs, &in.GPUs}, {"--to-tp", change.TP, &in.TP}, {"--to-dp", change.DP, &in.DP}, {"--to-pp", change.PP, &in.PP}} {
		if f.v > 0 {
			*f.dst = f.v
			add(fmt.Sprintf("%s %d", f.flag, f.v))
			shapeChanged = true
		}
	}
	if change.EP != nil {
		in.EP = *change.EP
		add(fmt.Sprintf("--to-ep=%t", *change.EP))
		shapeChanged = true
	}
	if change.TP == 0 && (change.GPUs > 0 || change.DP > 0 || change.PP > 0) {
		in.TP = 0 // one engine over the new GPU count
	}
	if in.WeightsGiB > 0 && base.Weights != nil && (shapeChanged || dtypeChanged) {
		// Carry the measured weights over by the estimate's ratio (at the new precision).
		if err := in.CheckShape(); err != nil {
			return nil, curve, err
		}
		est := *base.Weights
		if dtypeChanged {
			e, err := capacity.EstimateWeights(cfg, in.WeightDtype, in.ParamsB)
			if err != nil {
				return nil, curve, fmt.Errorf("weights at %s: %w", in.WeightDtype, err)
			}
			est = e
		}
		in.WeightsGiB = float64(capacity.WeightsPerGPU(est, in.Shape())) * base.WeightsScale / float64(1<<30)
	}
	if change.PromptTokens > 0 {
		prompt = change.PromptTokens
		add(fmt.Sprintf("--to-prompt-tokens %.0f", prompt))
	}
	if change.OutputTokens > 0 {
		output = change.OutputTokens
		add(fmt.Sprintf("--to-output-tokens %.0f", output))
	}
	if change.MaxModelLen > 0 {
		mml = change.MaxModelLen
		add(fmt.Sprintf("--to-max-model-len %d", mml))
	}
	shared := whatIfPrefix(c, change, prompt)
	if change.PrefixTokens > 0 {
		add(fmt.Sprintf("--to-prefix-tokens %.0f", change.PrefixTokens))
	}
	if change.PrefixHitRate > 0 {
		add(fmt.Sprintf("--to-prefix-hit-rate %g", change.PrefixHitRate))
	}
	if name == "" {
		curve.note = "no --to-* change given: nothing to predict"
		return []WhatIfRow{measured}, curve, nil
	}
	p, err := capacity.PlanBudget(cfg, in)
	if p == nil {
		return nil, curve, err
	}
	pred := WhatIfRow{Scenario: name, Predicted: true, Shape: p.Shape.String(), GPU: in.GPU, RequestTokens: prompt + output, MaxModelLen: mml}
	if err != nil {
		pred.Basis = fmt.Sprintf("does not fit: %v", err)
		curve.note = "the changed deployment does not fit: no level is predicted"
		return []WhatIfRow{measured, pred}, curve, nil
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
	pred.Basis = "KV ceiling from the capacity model"
	at := func(tokens float64) float64 { return p.Concurrency(tokens) * scale }
	if why, assumed := prefixRefused(r); shared.Tokens > 0 && why != "" {
		pred.Basis += "; the shared prefix is not counted once: " + why
	} else if v, ok := capacity.SharedConcurrency(at, perCache, prompt+output, shared); ok {
		pred.Basis += fmt.Sprintf(", shared prefixes counted once (%s tokens held once per KV cache: %.1f requests instead of %.1f)%s",
			groupDigits(int64(shared.Counted())), v, pred.KVCeiling, assumed)
		pred.KVCeiling = v
	}
	ceiling := pred.KVCeiling
	if scale != 1 {
		pred.Basis += fmt.Sprintf(" (scaled by the measured ÷ modelled capacity, %.2f)", scale)
	}
	if !shapeChanged && !dtypeChanged {
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
		pred.Basis += "; the measured batch limit and knee do not carry over to another shape, GPU or precision"
	}
	if ceiling >= 1 {
		pred.Ceiling = &ceiling
	}
	roof, rerr := capacity.NewRoofline(p)
	baseRoof, berr := opt.Deployment.Roofline, opt.Deployment.RooflineErr // the measured deployment's, computed once
	// The shares are carried between rooflines that count FP4 tensor cores at the
	// share of their peak the public measurements reach (the bounds keep the peak).
	roof, baseRoof = predictingRoofline(roof, prediction.ComputeShare), predictingRoofline(baseRoof, prediction.ComputeShare)
	mp, mo := meanLengths(r)
	efficiency := 1.0
	if base.GPU != nil && p.GPU != nil {
		efficiency = prediction.VendorEfficiency(base.GPU.Vendor(), p.GPU.Vendor())
	}
	t0 := prediction.StepOverhead()
	measuredS, baseS := ceilingStep(r, baseRoof, mp, mo)
	if share := carriedEfficiency(measuredS, baseS, stepOverheadS(t0, baseRoof)) * efficiency; rerr == nil && share > 0 && pred.Ceiling != nil {
		// The step at the ceiling: the measured one less t0, scaled by the rooflines'
		// steps, plus t0 (carryStep); the throughput is the batch over it.
		v := efficiency * ceiling / carryStep(measuredS, baseS, roof.AtWorkload(ceiling, prompt, output).StepS, stepOverheadS(t0, baseRoof), stepOverheadS(t0, roof))
		pred.OutputTokS = &v
		lo, hi := prediction.IntervalFor(change.Kinds(opt.GPU)...).Bounds(v)
		pred.OutputTokSInterval = &Range{Value: v, Low: lo, High: hi}
		pred.Basis += fmt.Sprintf("; throughput = %.0f%% (the measured share of the roofline with prefill at the ceiling", share*100)
		if efficiency != 1 {
			pred.Basis += fmt.Sprintf(", × %.2f for %s's GPUs against %s's", efficiency, p.GPU.Vendor(), base.GPU.Vendor())
		}
		pred.Basis += ") × the changed roofline with prefill there"
		pred.Basis += stepOverheadNote(t0)
		pred.Basis += computeShareNote(baseRoof, roof)
	}
	switch {
	case rerr != nil:
		curve.note = "no level is predicted: " + rerr.Error()
	case berr != nil:
		curve.note = "no level is predicted: " + berr.Error()
	case math.IsNaN(mp) || mo <= 0:
		curve.note = "no level is predicted: the run's request lengths are unknown"
	default:
		curve.model = &CurveModel{Points: curveFromRun(r), Base: baseRoof, Changed: roof, PromptTokens: mp, OutputTokens: mo,
			ToPrompt: prompt, ToOutput: output, KVHolds: pred.KVCeiling, Efficiency: efficiency, StepOverhead: t0}
	}
	return []WhatIfRow{measured, pred}, curve, nil
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

// ceilingStep is the measured decode step at the realistic ceiling (within the
// SLOs: the decode batch of that level over its output tok/s) and the roofline
// with prefill's step there; 0s when unknown.
func ceilingStep(r *Run, roof *capacity.Roofline, prompt, output float64) (measuredS, roofS float64) {
	if roof == nil || r.Decision == nil || r.Decision.AtCeiling == nil || math.IsNaN(prompt) || output <= 0 {
		return 0, 0
	}
	a := r.Decision.AtCeiling
	if a.OutputTokS <= 0 {
		return 0, 0
	}
	for _, l := range r.Levels {
		if l.Level == a.Level && l.DecodeConcurrency > 0 {
			return l.DecodeConcurrency / a.OutputTokS, roof.AtWorkload(l.DecodeConcurrency, prompt, output).StepS
		}
	}
	return 0, 0
}
