package analyze

import (
	"fmt"
	"math"
)

// ServerFacts is what the trace's ceiling.run says the server revealed.
type ServerFacts struct {
	Kind             string
	KVCapacityTokens *int64
	MaxModelLen      *int64
	Slots            *int64
}

// WorkloadTokens are prompt+output tokens per successful non-warm-up request of the run.
type WorkloadTokens struct{ Mean, P99 float64 }

// minLevels is the fewest levels a knee or a curve fit can be trusted from.
const minLevels = 4

// modelDisagreement is how far the modelled KV capacity may stray from what the server
// measured before the analysis says so: beyond 25% an input (utilization, weights,
// reserve, dtype) is probably wrong.
const modelDisagreement = 0.25

// modelRun fills r.Capacity, r.Fit, r.Ceilings, r.Ceiling and appends its warnings
// (fewer than 4 levels, no plateau reached...) given r.Levels already computed.
func modelRun(r *Run, facts ServerFacts, work WorkloadTokens, opt Options) error {
	capacity, warnings, err := BuildCapacity(facts, work, opt)
	if err != nil {
		return err
	}
	r.Capacity = capacity
	r.Warnings = append(r.Warnings, warnings...)

	pts := throughputPoints(r.Levels)
	if len(pts) >= 3 {
		if f, err := FitUSL(pts); err == nil {
			r.Fit.USL = f
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("no USL fit: %v", err))
		}
	}

	evidence := map[string][]string{}
	if capacity != nil && capacity.ConcurrencyAtMeanRequest != nil && capacity.KVCapacityTokens != nil {
		v := *capacity.ConcurrencyAtMeanRequest
		r.Ceilings.KV = &v
		evidence["kv"] = []string{fmt.Sprintf("the KV cache holds %s tokens (%s); at the workload's mean request of %.0f prompt+output tokens that is %.1f requests at once",
			groupDigits(*capacity.KVCapacityTokens), capacity.Source, *capacity.MeanRequestTokens, v)}
	}
	if v, ev, ok := BatchCeiling(r.Levels); ok {
		r.Ceilings.Batch = &v
		evidence["batch"] = []string{ev}
		if facts.Slots != nil {
			agree := ""
			if float64(*facts.Slots) == v {
				agree = ", as measured"
			}
			evidence["batch"] = append(evidence["batch"], fmt.Sprintf("the server declares %d slots%s", *facts.Slots, agree))
		}
	}
	if v, ev, ok := KneeCeiling(r.Levels, DefaultPlateauGain); ok {
		r.Ceilings.Knee = &v
		evidence["knee"] = ev
	} else if len(ev) > 0 {
		evidence["knee"] = ev
	}
	if f := r.Fit.USL; f != nil && f.NMax != nil {
		note := "the knee comes from the data, not from the fit"
		if k := r.Ceilings.Knee; k != nil && *f.NMax > *k {
			note = "on plateau-shaped curves that overshoots, so the knee comes from the data"
		}
		evidence["knee"] = append(evidence["knee"], fmt.Sprintf("the USL fit (σ=%.4f, κ=%.2e, R²=%.3f) puts its peak at %.0f; %s",
			f.Sigma, f.Kappa, f.R2, *f.NMax, note))
	}
	sloV, sloEv, sloFound, sloBelow := SLOCeiling(r.Levels, opt.SLO)
	if sloFound {
		r.Ceilings.SLO = &sloV
		evidence["slo"] = []string{sloEv}
		if sloBelow {
			r.Warnings = append(r.Warnings, "the SLOs are not met at any tested level: "+sloEv)
		}
	}
	r.Ceiling = Realistic(r.Ceilings, evidence)
	if r.Ceiling.Binding == "none" && sloEv != "" {
		r.Ceiling.Evidence = append(r.Ceiling.Evidence, sloEv)
	}

	r.Warnings = append(r.Warnings, ceilingWarnings(r, pts)...)
	return nil
}

// ceilingWarnings are the warnings about the sweep itself.
// throughputDrop is how far below its peak a higher level's throughput may fall before
// the analysis warns: a plateau wobbles by a few percent, a collapse does not.
const throughputDrop = 0.2

func ceilingWarnings(r *Run, pts []Point) []string {
	var w []string
	if n := len(pts); n > 0 && n < minLevels {
		w = append(w, fmt.Sprintf("only %d levels: too few to locate a knee or trust a curve fit (sweep at least %d)", n, minLevels))
	}
	if len(pts) == 0 {
		return w
	}
	top := pts[len(pts)-1].N
	if r.Ceilings.Knee == nil && r.Ceilings.Batch == nil {
		w = append(w, fmt.Sprintf("no plateau reached in the tested range (up to concurrency %g): throughput and batch were still growing, so the ceiling may lie higher", top))
	}
	// A throughput that falls well below its peak at a higher level is not a plateau:
	// the server degraded under overload (preemption, thrashing), or something else
	// competed for it or for the client while that level ran.
	peak := pts[0]
	for _, p := range pts {
		if p.X > peak.X {
			peak = p
		}
	}
	for _, p := range pts {
		if p.N > peak.N && p.X < (1-throughputDrop)*peak.X {
			w = append(w, fmt.Sprintf("throughput falls from %.0f tok/s at concurrency %g to %.0f at %g (%.0f%% less): the server degrades under overload, or something competed with it or the client during that level; levels beyond the peak do not measure capacity",
				peak.X, peak.N, p.X, p.N, 100*(1-p.X/peak.X)))
			break
		}
	}
	if kv := r.Ceilings.KV; kv != nil && *kv > 0 && top > 2**kv {
		w = append(w, fmt.Sprintf("the sweep went to concurrency %g, %.1f× what the KV cache holds at the mean request (%.1f): levels beyond it measure queueing, not serving",
			top, top / *kv, *kv))
	}
	return w
}

// BuildCapacity assembles the capacity section: modelled from the config and hardware
// when given, measured when the server revealed its KV capacity (measured beats
// modelled; the prediction stays beside it), and the concurrency the KV cache holds at
// max_model_len and at the workload's mean and p99 request. It returns nil when
// nothing is known. Concurrency counts every replica (GPUs / TP engines) of the
// deployment.
func BuildCapacity(facts ServerFacts, work WorkloadTokens, opt Options) (*Capacity, []string, error) {
	var warnings []string
	var plan *PlanResult
	var kv *KVModel
	var cfg *ModelConfig
	if opt.TP <= 0 && opt.GPUs > 0 {
		opt.TP = opt.GPUs // TP 0 means one engine over every GPU
	}
	if opt.ModelConfig != "" {
		var err error
		cfg, err = LoadModelConfig(opt.ModelConfig)
		if err != nil {
			return nil, nil, err
		}
		if opt.GPU != "" || opt.MemoryGiB > 0 {
			plan, err = PlanBudget(cfg, BudgetInput{
				GPU: opt.GPU, MemoryGiB: opt.MemoryGiB, Utilization: opt.Utilization,
				WeightsGiB: opt.WeightsGiB, ReserveGiB: opt.ReserveGiB, GPUs: opt.GPUs, TP: opt.TP,
				KVDtype: opt.KVDtype, WeightDtype: opt.WeightDtype, ParamsB: opt.ParamsB,
			})
			if err != nil {
				return nil, nil, fmt.Errorf("capacity model: %w", err)
			}
			kv = &plan.KV
		} else {
			m, err := NewKVModel(cfg, opt.TP, opt.KVDtype)
			if err != nil {
				return nil, nil, fmt.Errorf("model config %s: %w", opt.ModelConfig, err)
			}
			kv = &m
		}
	} else if opt.GPU != "" {
		warnings = append(warnings, "--gpu without --model-config: the KV budget needs the model's config.json")
	}
	measured := facts.KVCapacityTokens
	if measured != nil && *measured <= 0 {
		measured = nil
	}
	if kv == nil && measured == nil {
		return nil, warnings, nil
	}

	c := &Capacity{Budget: nil}
	if kv != nil {
		b := kv.BytesPerToken()
		c.KVBytesPerToken = &b
	}
	if plan != nil {
		b := plan.Budget
		c.Budget = &b
		t := plan.KVTokens
		c.ModelledKVCapacityTokens = &t
	}
	replicas := 1
	if plan != nil {
		replicas = plan.Replicas
	} else if opt.TP > 0 && opt.GPUs >= opt.TP {
		replicas = opt.GPUs / opt.TP
	}
	// concurrencyAt uses the exact per-request footprint when the model decides,
	// and tokens / capacity when the server's figure does.
	var concurrencyAt func(tokens float64) float64
	if measured != nil {
		v := *measured
		c.MeasuredKVCapacityTokens = &v
		c.KVCapacityTokens = &v
		c.Source = "measured"
		concurrencyAt = func(tokens float64) float64 { return float64(replicas) * ConcurrencyAt(v, tokens) }
		if m := c.ModelledKVCapacityTokens; m != nil && *m > 0 {
			if d := math.Abs(float64(*m)-float64(v)) / float64(v); d > modelDisagreement {
				warnings = append(warnings, fmt.Sprintf("the server's KV capacity (%s tokens) differs from the model's prediction (%s) by %.0f%%: check --gpu-util, --weights-gib, --reserve-gib and --kv-dtype",
					groupDigits(v), groupDigits(*m), d*100))
			}
		}
	} else if plan != nil {
		c.KVCapacityTokens = c.ModelledKVCapacityTokens
		c.Source = "modelled"
		concurrencyAt = plan.Concurrency
	} else {
		// A config without hardware gives bytes per token but no capacity.
		c.Source = "modelled"
	}

	switch {
	case facts.MaxModelLen != nil && *facts.MaxModelLen > 0:
		v := *facts.MaxModelLen
		c.MaxModelLen = &v
	case opt.MaxModelLen > 0:
		v := opt.MaxModelLen
		c.MaxModelLen = &v
	case cfg != nil && cfg.MaxModelLen > 0:
		v := cfg.MaxModelLen
		c.MaxModelLen = &v
	}
	if work.Mean > 0 {
		v := work.Mean
		c.MeanRequestTokens = &v
	}
	if work.P99 > 0 {
		v := work.P99
		c.P99RequestTokens = &v
	}
	if concurrencyAt != nil {
		at := func(tokens float64) *float64 {
			if tokens <= 0 {
				return nil
			}
			v := concurrencyAt(tokens)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil
			}
			return &v
		}
		if c.MaxModelLen != nil {
			c.ConcurrencyAtMaxModelLen = at(float64(*c.MaxModelLen))
		}
		c.ConcurrencyAtMeanRequest = at(work.Mean)
		c.ConcurrencyAtP99Request = at(work.P99)
	}
	return c, warnings, nil
}

// groupDigits writes n with thousands separators: 351,424.
func groupDigits(n int64) string {
	s := fmt.Sprintf("%d", n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
