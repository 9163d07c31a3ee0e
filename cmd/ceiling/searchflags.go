package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/record"
	"github.com/ceiling-llm/ceiling/searchrule"
	"github.com/spf13/pflag"
)

// searchFlagValues are the record flags of the ceiling search, as given.
type searchFlagValues struct {
	ttft, tpot, itl, e2e  string
	goodput, errors, knee string
	kvEvidence, kvUsage   string
	resolution            string
	beyondKV              bool
	sustain               time.Duration
	start                 float64
}

// searchFlagNames are the flags that only mean something to a search.
var searchFlagNames = []string{"slo-ttft", "slo-tpot", "slo-itl", "slo-e2e", "min-goodput", "max-errors", "knee",
	"kv-evidence", "kv-usage", "resolution", "beyond-kv", "sustain", "search-start"}

// searchFlags maps the search flags to the options; it returns a usage message
// naming the flag, or "".
func searchFlags(fs *pflag.FlagSet, o *record.Options, v searchFlagValues) string {
	if !o.Auto && !o.RateAuto {
		for _, name := range searchFlagNames {
			if fs.Changed(name) {
				return fmt.Sprintf("--%s belongs to a search: give --concurrency auto or --rate auto", name)
			}
		}
		return ""
	}
	crit := []searchrule.Criterion{}
	for _, f := range []struct{ name, metric, text string }{
		{"slo-ttft", "ttft", v.ttft}, {"slo-tpot", "tpot", v.tpot}, {"slo-itl", "itl", v.itl}, {"slo-e2e", "e2e", v.e2e},
	} {
		if strings.TrimSpace(f.text) == "" {
			continue
		}
		cs, err := searchrule.ParseSLO(f.metric, f.text)
		if err != nil {
			return fmt.Sprintf("--%s: %v", f.name, err)
		}
		crit = append(crit, cs...)
	}
	share := func(name, text string) (float64, bool, string) {
		if strings.TrimSpace(text) == "off" {
			return 0, false, ""
		}
		f, err := searchrule.ParseShare(text)
		if err != nil {
			return 0, false, fmt.Sprintf("--%s: %v (or off)", name, err)
		}
		return f, true, ""
	}
	if f, on, msg := share("max-errors", v.errors); msg != "" {
		return msg
	} else if on {
		crit = append(crit, searchrule.Criterion{Kind: "errors", Limit: f})
	}
	if v.goodput != "" {
		f, on, msg := share("min-goodput", v.goodput)
		if msg != "" {
			return msg
		}
		if on {
			if v.ttft == "" && v.tpot == "" && v.e2e == "" {
				return "--min-goodput needs a latency target to count good requests: give --slo-ttft, --slo-tpot or --slo-e2e"
			}
			crit = append(crit, searchrule.Criterion{Kind: "goodput", Limit: f})
		}
	}
	switch v.kvEvidence {
	case "on":
		crit = append(crit, searchrule.Criterion{Kind: "kv"})
	case "off":
	default:
		return fmt.Sprintf("--kv-evidence %q: want on or off", v.kvEvidence)
	}
	if f, on, msg := share("kv-usage", v.kvUsage); msg != "" {
		return msg
	} else if on {
		crit = append(crit, searchrule.Criterion{Kind: "kv-usage", Limit: f})
	}
	if f, on, msg := share("knee", v.knee); msg != "" {
		return msg
	} else if o.RateAuto && !fs.Changed("knee") {
		o.Knee = 0 // record's default for open loop: off (Options.Knee)
	} else if on && f > 0 {
		o.Knee = f
	} else {
		o.Knee = -1
	}
	if v.start < 0 || math.IsNaN(v.start) || math.IsInf(v.start, 0) {
		return fmt.Sprintf("--search-start %g: want a positive level", v.start)
	}
	if o.Auto && v.start != math.Floor(v.start) {
		return fmt.Sprintf("--search-start %g: a concurrency is a whole number of requests", v.start)
	}
	o.Criteria, o.Resolution, o.BeyondKV, o.Sustain, o.SearchStart = crit, v.resolution, v.beyondKV, v.sustain, v.start
	o.Analyzer = analyze.SearchFigures
	if v.start > 0 {
		o.SearchStartWhy = "--search-start"
	}
	return ""
}

// predictedStart is the plan's prediction of the concurrency the KV cache holds
// for the declared deployment (--model-config with --gpu), at the workload's
// request length: where the search starts. The reserve is modelled for the
// server's engine (serverKind as the probe names it; "" before the probe, and an
// engine the reserve model does not cover, get vLLM V1's, as plan's default).
// 0 when nothing is declared or the model cannot say.
func predictedStart(cf capacityFlags, tokens int, serverKind string) (float64, string) {
	if cf.modelConfig == "" || cf.gpu == "" || tokens <= 0 {
		return 0, ""
	}
	cfg, err := capacity.LoadModelConfig(cf.modelConfig)
	if err != nil {
		return 0, ""
	}
	in := cf.budgetInput()
	// record takes no budget flags: the plan's defaults, with the modelled reserve.
	reserveEngine, modelled := capacity.ReserveEngineOf(serverKind)
	in.Utilization, in.ReserveGiB = capacity.DefaultUtilization, 0
	in.Reserve = &capacity.ReserveInput{Engine: reserveEngine}
	if in.KVDtype == "" {
		in.KVDtype = "auto"
	}
	p, err := capacity.PlanBudget(cfg, in)
	if err != nil || p == nil {
		return 0, ""
	}
	c := p.Concurrency(float64(tokens))
	if math.IsNaN(c) || c < 1 {
		return 0, ""
	}
	c = math.Min(math.Floor(c), record.MaxConcurrency)
	reserve := reserveEngine + "'s modelled reserve"
	switch {
	case modelled || serverKind == "":
	case serverKind == "unknown":
		reserve += " (the server's engine is unknown)"
	default:
		reserve += fmt.Sprintf(" (%s's is not modelled)", serverKind)
	}
	return c, fmt.Sprintf("the plan's prediction for the declared deployment (%s on %s, %s): the KV cache holds %g requests of %d tokens", cf.modelConfig, cf.gpu, reserve, c, tokens)
}
