package analyze

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/capacity"
)

// The decision section of a run: each measured level against the physical roofline
// of its deployment (capacity.Roofline), output tokens per GPU, per-user speed and the
// cost per million tokens, and at the realistic ceiling the cost at the SLOs and the
// replicas a target load needs. Computed from the finished Level values only.

// DecisionOptions are the inputs of the decision section; the zero value gives the
// shape, the roofline and tokens per GPU, without cost or replicas.
type DecisionOptions struct {
	// GPUHourCost is the price of one GPU for one hour in USD (0 = no cost figures).
	GPUHourCost float64
	// TargetRPS or TargetUsers (with ThinkTimeS, a user's pause between the end of one
	// response and the next request) is the load to size replicas for (0 = none).
	TargetRPS, TargetUsers, ThinkTimeS float64
	// Headroom is the fraction of the measured capacity kept spare (for bursts and a
	// failed replica): replicas are sized to run at 1 − Headroom of it.
	Headroom float64
	// PowerCostKWh is the price of electricity in USD per kWh and PUE the facility's
	// power usage effectiveness (0 = 1): with GPU telemetry they give the energy cost
	// per million tokens (policy_energycost.go). 0 = no energy cost.
	PowerCostKWh, PUE float64
}

// DefaultHeadroom keeps a fifth of each replica's measured capacity spare.
const DefaultHeadroom = 0.2

// farBelowRoofline is the share of its roofline under which a level is named "far
// below the roofline" rather than by the bound it would meet: below 30%, prefill
// interference, scheduling, communication or the client are the likelier limits.
const farBelowRoofline = 0.30

// RegimeFarBelow names a level under farBelowRoofline of its roofline: neither bound
// explains it; prefill interference, scheduling, communication or the client are the
// likelier limits.
const RegimeFarBelow = "far below both"

// buildDecision assembles the decision section from the finished levels and ceiling.
func buildDecision(r *Run, opt Options) (*Decision, []string) {
	var warnings []string
	s := opt.Shape()
	d := &Decision{Shape: s.String(), GPU: opt.GPU, GPUs: s.GPUs(), TP: s.TP, DP: s.DP, PP: s.PP, EP: s.EP,
		Replicas: s.Replicas, Levels: []LevelDecision{}, Notes: []string{}}
	if opt.Decision.GPUHourCost > 0 {
		v := opt.Decision.GPUHourCost
		d.GPUHourCost = &v
	}
	if opt.GPUs == 0 && opt.TP == 0 {
		d.Notes = append(d.Notes, "no --gpus given: per-GPU figures and costs count one GPU")
	}
	roof, note := runRoofline(opt)
	if note != "" {
		d.Notes = append(d.Notes, note)
	}
	if roof != nil {
		d.Roofline = &RooflineInfo{HBMBytesS: roof.GPU.BandwidthBytesS, PeakFLOPs: roof.PeakFLOPs, ComputeDtype: roof.ComputeDtype,
			LinkBytesS: roof.LinkBytesS, AllReduceLatencyS: roof.AllReduceLatencyS,
			WeightBytesPerGPU: roof.RestBytesPerGPU + roof.ExpertBytesPerGPU, ActiveParams: roof.ActiveParams}
	}
	gpus := float64(d.GPUs)
	farNoted := false
	for _, l := range r.Levels {
		ld := LevelDecision{Level: l.Level, Concurrency: l.Concurrency, OutputTokSPerGPU: l.OutputTokS / gpus, PerUserTokS: l.PerUserTokS}
		ld.CostPerMOutput, ld.CostPerMTotal = costs(opt.Decision.GPUHourCost, gpus, l.OutputTokS, l)
		if roof != nil {
			ld.Roofline = levelRoofline(roof, l)
		}
		d.Levels = append(d.Levels, ld)
		if ld.Roofline != nil && ld.Roofline.Regime == RegimeFarBelow && !farNoted {
			farNoted = true
			d.Notes = append(d.Notes, fmt.Sprintf("\"%s\": under %.0f%% of the roofline neither memory nor compute explains the speed; prefill interference, scheduling, communication or a client limit are likelier", RegimeFarBelow, farBelowRoofline*100))
		}
	}
	d.AtCeiling = atCeiling(r, d, opt)
	if opt.Decision.TargetRPS > 0 || opt.Decision.TargetUsers > 0 {
		if d.AtCeiling == nil || d.AtCeiling.RequestS <= 0 {
			warnings = append(warnings, "no replicas for the target load: no level serves requests within the SLOs")
		} else {
			d.Sizing = sizing(d.AtCeiling, r, d.GPUs, opt.Decision)
		}
	}
	return d, warnings
}

// runRoofline is the roofline of the declared deployment, or says why there is none.
func runRoofline(opt Options) (*capacity.Roofline, string) {
	if opt.ModelConfig == "" || opt.GPU == "" {
		return nil, "no roofline: it needs --model-config and a catalog --gpu (HBM bandwidth and FLOP/s)"
	}
	dep := opt.Deployment
	if dep == nil {
		var err error
		if dep, err = capacity.NewDeployment(opt.ModelConfig, opt.BudgetInput); err != nil {
			return nil, fmt.Sprintf("no roofline: %v", err)
		}
	}
	if dep.Roofline == nil {
		return nil, fmt.Sprintf("no roofline: %v", dep.RooflineErr)
	}
	return dep.Roofline, ""
}

// levelRoofline puts a level beside the roofline at the batch it actually ran: its
// measured decode concurrency (Little's law), each request holding its prompt and
// half its output on average.
func levelRoofline(roof *capacity.Roofline, l Level) *LevelRoofline {
	batch := l.DecodeConcurrency
	if batch <= 0 || l.OutputTokS <= 0 {
		return nil
	}
	ctx := l.MeanPromptTokens + l.MeanOutputTokens/2
	pt := roof.At(batch, ctx)
	lr := &LevelRoofline{Batch: batch, ContextTokens: ctx, TotalTokS: pt.TotalTokS, PerUserTokS: pt.PerUserTokS, Bound: pt.Bound,
		PctTotal: 100 * l.OutputTokS / pt.TotalTokS}
	if l.PerUserTokS > 0 {
		lr.PctPerUser = 100 * l.PerUserTokS / pt.PerUserTokS
	}
	lr.Regime = pt.Bound + "-bound"
	if lr.PctTotal < 100*farBelowRoofline {
		lr.Regime = RegimeFarBelow
	}
	return lr
}

// costs is the cost per million output tokens, gpus × USD/h ÷ (output tok/s × 3600)
// × 10^6, and per million prompt+output tokens.
func costs(usdPerGPUHour, gpus, outputTokS float64, l Level) (out, total *float64) {
	if usdPerGPUHour <= 0 || outputTokS <= 0 {
		return nil, nil
	}
	perHour := gpus * usdPerGPUHour
	o := perHour / (outputTokS * 3600) * 1e6
	out = &o
	if l.MeanOutputTokens > 0 {
		tokS := outputTokS * (1 + l.MeanPromptTokens/l.MeanOutputTokens)
		t := perHour / (tokS * 3600) * 1e6
		total = &t
	}
	return out, total
}

// atCeiling picks the level that serves at the realistic ceiling: the one with the
// most output within the SLOs among those offered no more than the ceiling (5%
// tolerance); without a ceiling, the one with the most output within the SLOs.
func atCeiling(r *Run, d *Decision, opt Options) *AtCeiling {
	var best *AtCeiling
	for i, l := range r.Levels {
		if !l.Valid { // it did not run at what it is labelled with: no cost figure from it
			continue
		}
		if c := r.Ceiling.Concurrency; c != nil && offered(l) > *c*(1+tieTolerance)+1e-9 {
			continue
		}
		share := 1.0
		if l.GoodputRequestS != nil && l.RequestS > 0 {
			share = math.Min(1, *l.GoodputRequestS/l.RequestS)
		}
		a := &AtCeiling{Level: l.Level, Concurrency: offered(l), GoodputShare: share, OutputTokS: l.OutputTokS * share, RequestS: l.RequestS * share}
		if best == nil || a.OutputTokS > best.OutputTokS {
			if lr := d.Levels[i].Roofline; lr != nil {
				v := lr.PctTotal
				a.PctRoofline = &v
			}
			a.CostPerMOutput, a.CostPerMTotal = costs(opt.Decision.GPUHourCost, float64(d.GPUs), a.OutputTokS, l)
			best = a
		}
	}
	return best
}

// sizing works out the copies of the measured deployment a target load needs: with
// target users, each cycles through a request (the mean E2E at the ceiling) and a
// think time, so they send U ÷ (E2E + think) requests per second (the interactive
// response-time law, Denning and Buzen 1978). Deployments = ceil(R ÷ (per-deployment
// rate × (1 − headroom))).
func sizing(a *AtCeiling, r *Run, gpus int, o DecisionOptions) *Sizing {
	h := o.Headroom
	if h <= 0 || h >= 1 {
		h = DefaultHeadroom
	}
	s := &Sizing{TargetRPS: o.TargetRPS, ThinkTimeS: o.ThinkTimeS, Headroom: h, PerDeploymentRPS: a.RequestS}
	if o.TargetUsers > 0 {
		u := o.TargetUsers
		s.TargetUsers = &u
		e2e := 0.0
		for _, l := range r.Levels {
			if l.Level == a.Level && l.E2E.Mean != nil {
				e2e = *l.E2E.Mean
			}
		}
		s.TargetRPS = u / (e2e + o.ThinkTimeS)
	}
	s.Deployments = int(math.Ceil(s.TargetRPS / (a.RequestS * (1 - h))))
	s.Deployments = max(s.Deployments, 1)
	s.GPUs = s.Deployments * gpus
	s.Utilization = s.TargetRPS / (float64(s.Deployments) * a.RequestS)
	return s
}
