package analyze

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// The capacity section of a run: the capacity model (package capacity) put beside what
// the server revealed and the workload's request lengths.

// serverFacts is what the trace's ceiling.run says the server revealed.
type serverFacts struct {
	Kind             string
	KVCapacityTokens *int64
	MaxModelLen      *int64
	Slots            *int64
}

// workloadTokens are prompt+output tokens per successful non-warm-up request of the run.
type workloadTokens struct{ Mean, P99 float64 }

// buildCapacity assembles the capacity section: modelled from the config and hardware
// when given, measured when the server revealed its KV capacity (measured beats
// modelled; the prediction stays beside it), and the concurrency the KV cache holds at
// max_model_len and at the workload's mean and p99 request. It returns nil when
// nothing is known. Concurrency counts every replica (GPUs / TP engines) of the
// deployment.
func buildCapacity(facts serverFacts, work workloadTokens, opt Options) (*Capacity, []string, error) {
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
	// Every DP rank of every replica holds its own KV cache; the server reveals the
	// capacity of one.
	replicas := shape.KVCaches()
	// concurrencyAt uses the exact per-request footprint when the model decides,
	// and tokens / capacity when the server's figure does.
	var concurrencyAt func(tokens float64) float64
	if measured != nil {
		v := *measured
		c.MeasuredKVCapacityTokens = &v
		c.KVCapacityTokens = &v
		c.Source = "measured"
		concurrencyAt = func(tokens float64) float64 { return float64(replicas) * capacity.ConcurrencyAt(v, tokens) }
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
func groupDigits(n int64) string { return numfmt.Int(n) }
