package main

import (
	"fmt"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/spf13/pflag"
)

// addAnalyzeFlags registers the flags that analyze and report share (SLOs, the
// capacity flags, the timeline) and returns a function that turns them into
// analyze.Options after parsing.
func addAnalyzeFlags(fs *pflag.FlagSet) func() (analyze.Options, error) {
	sloTTFT := fs.Duration("slo-ttft", 0, "latency target for time to first token, e.g. 2s (0 = none)")
	sloTPOT := fs.Duration("slo-tpot", 0, "latency target for time per output token, e.g. 50ms (0 = none)")
	sloE2E := fs.Duration("slo-e2e", 0, "latency target for the whole request, e.g. 30s (0 = none)")
	var cf capacityFlags
	cf.addDeployment(fs)
	cf.addBudget(fs)
	timelineLevel := fs.Int("timeline-level", -1, "level drawn on the per-request timeline (-1 = the level nearest the ceiling)")

	return func() (analyze.Options, error) {
		opt := analyze.Options{
			ModelConfig:   cf.modelConfig,
			BudgetInput:   cf.budgetInput(),
			MaxModelLen:   cf.maxModelLen,
			TimelineLevel: *timelineLevel,
		}
		for _, d := range []struct {
			name string
			v    time.Duration
			dst  **float64
		}{{"--slo-ttft", *sloTTFT, &opt.SLO.TTFT}, {"--slo-tpot", *sloTPOT, &opt.SLO.TPOT}, {"--slo-e2e", *sloE2E, &opt.SLO.E2E}} {
			if d.v < 0 {
				return opt, fmt.Errorf("%s must not be negative, got %s", d.name, d.v)
			}
			if d.v > 0 {
				s := d.v.Seconds()
				*d.dst = &s
			}
		}
		if err := cf.check(); err != nil {
			return opt, err
		}
		if *timelineLevel < -1 {
			return opt, fmt.Errorf("--timeline-level must be a level index or -1, got %d", *timelineLevel)
		}
		return opt, nil
	}
}
