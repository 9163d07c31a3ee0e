package capacity

import "math"

// Decisions of plan, shared by plan, analyze and whatif: what fixes a context that
// does not fit, and which levels of a sweep the KV budget can serve. They compute;
// rendering is the caller's.

// MaxModelLenFix is one way to make max_model_len fit a KV cache, and the requests
// of max_model_len tokens one cache then holds (predicted).
type MaxModelLenFix struct {
	// Kind is "cap" (cap max_model_len at what one cache holds), "kv-fp8",
	// "more-tp" (twice the GPUs in one engine) or "dp" (DP attention: no fix).
	Kind string
	Fits float64
	// Plan is the replanned deployment (nil for "cap"); Shape the shape tried.
	Plan  *PlanResult
	Shape Shape
}

// MaxModelLenFixes says whether max_model_len fits once in one KV cache of p
// (fits, the requests one cache holds) and, when it does not, what each fix gives.
// ok is false when maxModelLen is unknown or fits.
func MaxModelLenFixes(p *PlanResult, maxModelLen int64) (fits float64, fixes []MaxModelLenFix, ok bool) {
	if maxModelLen <= 0 {
		return 0, nil, false
	}
	tokens := float64(maxModelLen)
	fits = p.FitsOnce(tokens)
	if fits >= 1 {
		return fits, nil, false
	}
	if p.KVTokens > 0 {
		fixes = append(fixes, MaxModelLenFix{Kind: "cap", Fits: 1})
	}
	if p.KV.Dtype != "fp8" {
		if q, err := Replan(p, func(in *BudgetInput) { in.KVDtype = "fp8" }); err == nil {
			fixes = append(fixes, MaxModelLenFix{Kind: "kv-fp8", Fits: q.FitsOnce(tokens), Plan: q})
		}
	}
	more := p.Shape
	more.TP *= 2
	if q, err := Replan(p, func(in *BudgetInput) { in.TP, in.GPUs = more.TP, more.GPUs() }); err == nil {
		fixes = append(fixes, MaxModelLenFix{Kind: "more-tp", Fits: q.FitsOnce(tokens), Plan: q, Shape: more})
	}
	best, bestShape := 0.0, Shape{}
	var bestPlan *PlanResult
	for _, s := range CandidateShapes(p) {
		if s.DP <= 1 {
			continue
		}
		q, err := Replan(p, func(in *BudgetInput) { in.TP, in.DP, in.EP, in.GPUs = s.TP, s.DP, s.EP, s.GPUs() })
		if err == nil && q.FitsOnce(tokens) > best {
			best, bestShape, bestPlan = q.FitsOnce(tokens), s, q
		}
	}
	if bestShape.DP > 1 {
		fixes = append(fixes, MaxModelLenFix{Kind: "dp", Fits: best, Plan: bestPlan, Shape: bestShape})
	} else if p.Shape.DP == 1 && p.Shape.TP > 1 {
		fixes = append(fixes, MaxModelLenFix{Kind: "dp", Fits: 0})
	}
	return fits, fixes, true
}

// LevelVerdict is one level of an intended sweep against the KV budget and the
// roofline.
type LevelVerdict struct {
	Level int
	// Demand is the KV tokens the level's requests need at once; Budget the multiple
	// of the whole KV budget that is.
	Demand, Budget float64
	// Batch is the batch that fits (at most the level), 0 when not even one does;
	// Roofline is the hardware's bound there (zero without a roofline or a batch).
	Batch    float64
	Roofline RooflinePoint
	// Serves is false when the level is beyond what the KV cache holds: it can
	// only measure queueing.
	Serves bool
}

// LevelVerdicts evaluates each level of a sweep at prompt and output tokens per
// request against p's KV budget and, when r is not nil, the roofline at a decoding
// request's mean context (prompt + output/2).
func LevelVerdicts(p *PlanResult, r *Roofline, levels []int, prompt, output int) []LevelVerdict {
	return LevelVerdictsShared(p, r, levels, prompt, output, SharedPrefix{})
}

// LevelVerdictsShared is LevelVerdicts with s's prefixes held once per KV cache:
// a level's demand is each cache's copy of the prefixes plus every request's
// unshared tokens.
func LevelVerdictsShared(p *PlanResult, r *Roofline, levels []int, prompt, output int, s SharedPrefix) []LevelVerdict {
	tokens := float64(prompt + output)
	ctx := float64(prompt) + float64(output)/2
	ceiling, shared := p.ConcurrencyShared(tokens, s)
	budget := float64(p.KVTokens) * float64(p.Shape.KVCaches())
	demand := func(l int) float64 { return float64(l) * tokens }
	if shared {
		held := float64(max(s.Prefixes, 1)) * s.Counted() * float64(p.Shape.KVCaches())
		demand = func(l int) float64 { return held + float64(l)*(tokens-s.Counted()) }
	}
	out := make([]LevelVerdict, 0, len(levels))
	for _, l := range levels {
		v := LevelVerdict{Level: l, Demand: demand(l), Serves: float64(l) <= ceiling}
		v.Budget = v.Demand / budget
		if batch := math.Min(float64(l), math.Floor(ceiling)); batch >= 1 {
			v.Batch = batch
			if r != nil {
				v.Roofline = r.At(batch, ctx)
			}
		}
		out = append(out, v)
	}
	return out
}
