package main

import (
	"fmt"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/searchrule"
	"github.com/spf13/pflag"
)

// addAnalyzeFlags registers the flags that analyze and report share (SLOs, the
// capacity flags, the timeline) and returns a function that turns them into
// analyze.Options after parsing.
func addAnalyzeFlags(fs *pflag.FlagSet) func() (analyze.Options, error) {
	ignoreCorrupt := fs.Bool("ignore-corrupt", false, "read the intact parts of a RUN.parts directory whose other parts are corrupt (their checksums fail), with a warning naming each part left out")
	sloTTFT := fs.Duration("slo-ttft", 0, "latency target for time to first token, e.g. 2s (0 = none)")
	sloTPOT := fs.Duration("slo-tpot", 0, "latency target for time per output token, e.g. 50ms (0 = none)")
	sloE2E := fs.Duration("slo-e2e", 0, "latency target for the whole request, e.g. 30s (0 = none)")
	knee := fs.String("knee", "", "gain per doubling of concurrency below which the throughput curve counts as flat, e.g. 10%, or off (default: the recording's own search criterion, else 10%)")
	maxErrors := fs.String("max-errors", "", "share of failed requests above which a level is past the ceiling, e.g. 5%, or off (default: the recording's own search criterion, else 5%)")
	var cf capacityFlags
	cf.addDeployment(fs)
	cf.addBudget(fs)
	gpuHourCost := fs.Float64("gpu-hour-cost", 0, "price of one GPU for one hour in USD, for the cost per million tokens (0 = no cost)")
	powerCost := fs.Float64("power-cost", 0, "price of electricity in USD per kWh, for the energy cost per million tokens from GPU telemetry (0 = none)")
	pue := fs.Float64("pue", 1, "power usage effectiveness of the facility: the energy cost is the GPUs' energy × PUE")
	targetRPS := fs.Float64("target-rps", 0, "load to size replicas for, in requests/s (0 = none)")
	targetUsers := fs.Float64("target-users", 0, "load to size replicas for, in users, each sending a request, reading it, thinking --think-time (0 = none)")
	thinkTime := fs.Duration("think-time", 0, "a user's pause between a response's end and the next request, for --target-users (0 = users send back to back)")
	headroom := fs.Float64("headroom", analyze.DefaultHeadroom, "fraction of the measured capacity kept spare when sizing replicas")
	timelineLevel := fs.Int("timeline-level", -1, "level drawn on the per-request timeline (-1 = the level nearest the ceiling)")
	percentiles := fs.String("percentiles", "", "tail percentiles to report beside p99.9 for every latency, e.g. 99.99,97.5 (each shown only where the level has enough requests: pN needs 1/(1 − N/100))")

	return func() (analyze.Options, error) {
		opt := analyze.Options{
			IgnoreCorrupt: *ignoreCorrupt,
			ModelConfig:   cf.modelConfig,
			BudgetInput:   cf.budgetInput(),
			MaxModelLen:   cf.maxModelLen,
			TimelineLevel: *timelineLevel,
			Decision: analyze.DecisionOptions{GPUHourCost: *gpuHourCost, TargetRPS: *targetRPS, TargetUsers: *targetUsers,
				ThinkTimeS: thinkTime.Seconds(), Headroom: *headroom, PowerCostKWh: *powerCost, PUE: *pue},
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"--gpu-hour-cost", *gpuHourCost}, {"--power-cost", *powerCost}, {"--target-rps", *targetRPS}, {"--target-users", *targetUsers}, {"--think-time", thinkTime.Seconds()}} {
			if f.v < 0 {
				return opt, fmt.Errorf("%s must not be negative, got %g", f.name, f.v)
			}
		}
		if *pue < 1 || *pue > 5 {
			return opt, fmt.Errorf("--pue must be between 1 and 5 (facility energy ÷ IT energy), got %g", *pue)
		}
		if *targetRPS > 0 && *targetUsers > 0 {
			return opt, fmt.Errorf("give --target-rps or --target-users, not both")
		}
		if *headroom < 0 || *headroom >= 1 {
			return opt, fmt.Errorf("--headroom must be in [0, 1), got %g", *headroom)
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
		var err error
		if opt.Knee, err = shareOrOff("knee", *knee, func(v float64) bool { return v > 0 }, "a gain per doubling above 0 such as 10%"); err != nil {
			return opt, err
		}
		if opt.MaxErrors, err = shareOrOff("max-errors", *maxErrors, func(v float64) bool { return v > 0 && v < 1 }, "a share of requests between 0 and 100% such as 5%"); err != nil {
			return opt, err
		}
		if err := cf.check(); err != nil {
			return opt, err
		}
		if *percentiles != "" {
			ps, err := parseFloats(*percentiles)
			if err == nil {
				for _, p := range ps {
					if p >= 100 {
						err = fmt.Errorf("%g is not below 100", p)
					}
				}
			}
			if err != nil {
				return opt, fmt.Errorf("--percentiles: %v (want percentiles above 0 and below 100, e.g. 99.99,97.5)", err)
			}
			opt.Percentiles = ps
		}
		if *timelineLevel < -1 {
			return opt, fmt.Errorf("--timeline-level must be a level index or -1, got %d", *timelineLevel)
		}
		return opt, nil
	}
}

// shareOrOff parses an optional share flag as analyze.Options holds it: "" is 0
// (the run's own criterion, else the default), "off" is -1, else a share that ok
// accepts ("10%" or 0.1); want says which in the error.
func shareOrOff(flag, text string, ok func(float64) bool, want string) (float64, error) {
	switch text {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	v, err := searchrule.ParseShare(text)
	if err != nil || !ok(v) {
		return 0, fmt.Errorf("--%s %q: want %s, or off", flag, text, want)
	}
	return v, nil
}
