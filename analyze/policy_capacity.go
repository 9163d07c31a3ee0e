package analyze

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// The capacity section of a run: the capacity model (package capacity) put beside what
// the server revealed and the workload's request lengths.

// serverFacts is what the trace's ceiling.run says the server revealed.
type serverFacts struct {
	Kind             engine.Name
	KVCapacityTokens *int64
	MaxModelLen      *int64
	Slots            *int64
	NCtx             *int64 // llama.cpp: the context of one slot
	NumGPUBlocks     *int64 // vLLM cache_config_info
	BlockSize        *int64
}

// workloadTokens are prompt+output tokens per successful non-warm-up request of the run.
type workloadTokens struct {
	Mean, P99 float64
	Prefix    prefixWorkload // the plan's shared prefixes (policy_prefixdemand.go)
}

// buildCapacity assembles the capacity section: modelled from the config and hardware
// when given, measured when the server revealed its KV capacity (measured beats
// modelled; the prediction stays beside it), and the concurrency the KV cache holds at
// max_model_len and at the workload's mean and p99 request. It returns nil when
// nothing is known. Concurrency counts every replica (GPUs / TP engines) of the
// deployment.
func buildCapacity(facts serverFacts, work workloadTokens, levels []Level, opt Options) (*Capacity, []string, error) {
	var warnings []string
	dep := opt.Deployment
	if dep == nil {
		var err error
		if dep, err = capacity.NewDeployment(opt.ModelConfig, opt.BudgetInput); err != nil {
			return nil, nil, err
		}
	}
	shape := dep.Shape
	cfg := dep.Config
	var plan *capacity.PlanResult
	var kv *capacity.KVModel
	if cfg != nil {
		if opt.GPU != "" || opt.MemoryGiB > 0 {
			if dep.PlanErr != nil {
				return nil, nil, fmt.Errorf("capacity model: %w", dep.PlanErr)
			}
			plan = dep.Plan
			kv = &plan.KV
		} else {
			if dep.KVErr != nil {
				return nil, nil, dep.KVErr
			}
			kv = dep.KV
		}
	} else if opt.GPU != "" {
		warnings = append(warnings, "--gpu without --model-config: the KV budget needs the model's config.json")
	}
	measured := facts.KVCapacityTokens
	if measured != nil && *measured <= 0 {
		measured = nil
	}
	// llama.cpp's stored figure (slots × n_ctx, by older recorders) assumed a cache
	// per slot; the layout is decided here from n_ctx and the slots instead.
	llama := facts.Kind == engine.LlamaCpp && facts.NCtx != nil && *facts.NCtx > 0 && facts.Slots != nil && *facts.Slots > 0
	if llama {
		measured = nil
	}
	if kv == nil && measured == nil && !llama {
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
		if r, ok := capacity.KVBudgetRange(plan); ok {
			c.KVBudgetRange = &r
		}
	}
	// Every DP rank of every replica holds its own KV cache; the server reveals the
	// capacity of one.
	replicas := shape.KVCaches()
	// concurrencyAt uses the exact per-request footprint when the model decides,
	// and tokens / capacity when the server's figure does.
	var concurrencyAt func(tokens float64) float64
	switch {
	case llama:
		per := llamaCapacity(c, *facts.Slots, *facts.NCtx, levels)
		if per != nil {
			concurrencyAt = func(tokens float64) float64 { return float64(replicas) * per(tokens) }
		}
		if c.Layout == LayoutUnknown && plan != nil {
			// The model's figure is the only single one; the bounds stay beside it.
			c.KVCapacityTokens = c.ModelledKVCapacityTokens
			c.Source = "modelled"
			concurrencyAt = plan.Concurrency
		}
	case measured != nil:
		v := *measured
		c.DeclaredKVCapacityTokens = &v
		c.KVCapacityTokens = &v
		c.Source = "declared"
		c.Layout = LayoutShared
		c.SourceDetail = declaredDetail(facts, v)
		concurrencyAt = func(tokens float64) float64 { return float64(replicas) * capacity.ConcurrencyAt(v, tokens) }
	case plan != nil:
		c.KVCapacityTokens = c.ModelledKVCapacityTokens
		c.Source = "modelled"
		c.SourceDetail = "the capacity model: config.json, the GPU's memory × utilization − weights − reserve, per KV cache"
		concurrencyAt = plan.Concurrency
	default:
		// A config without hardware gives bytes per token but no capacity.
		c.Source = "modelled"
	}
	if d := c.DeclaredKVCapacityTokens; d != nil {
		if m := c.ModelledKVCapacityTokens; m != nil && *m > 0 {
			if diff := math.Abs(float64(*m)-float64(*d)) / float64(*d); diff > modelDisagreement {
				warnings = append(warnings, fmt.Sprintf("the server's KV capacity (%s tokens) differs from the model's prediction (%s) by %.0f%%: check --gpu-util, --weights-gib, --reserve-gib and --kv-dtype",
					groupDigits(*d), groupDigits(*m), diff*100))
			}
		}
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
	applyPrefixSharing(c, prefixDemand(facts, work, levels), concurrencyAt, work)
	return c, warnings, nil
}

// declaredDetail names where a server's declared KV capacity v came from, in its
// engine's terms (package engine).
func declaredDetail(f serverFacts, v int64) string {
	if e, ok := engine.Of(f.Kind); ok && e.KVSource != nil {
		return e.KVSource(engine.DeclaredKV{Tokens: v, NumGPUBlocks: f.NumGPUBlocks, BlockSize: f.BlockSize})
	}
	return fmt.Sprintf("the server's own figure, %s tokens", groupDigits(v))
}

// groupDigits writes n with thousands separators: 351,424.
func groupDigits(n int64) string { return numfmt.Int(n) }
