package analyze

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ceiling-llm/ceiling/summary"
)

// What-if from summary points: most published figures (InferenceX, vendor tables,
// blog posts) are one summary per concurrency level, not requests. They stand in
// for the measured run as levels with no requests behind them: each becomes a
// level at its concurrency, with its throughput, per-user speed and median
// latencies, and the what-if runs on them exactly as on a trace. The result says
// it was built from summary points (SummaryPointsBasis) and what each level lacks.

// WhatIfFromSummary predicts change from the summary points s of the deployment
// opt describes (Options.BudgetInput: the GPU, GPU count and shape the points were
// measured on). Throughputs per GPU are multiplied by the deployment's GPUs.
func WhatIfFromSummary(s *summary.Summary, opt Options, change WhatIfChange) (*WhatIfResult, error) {
	if s == nil || len(s.Points) == 0 {
		return nil, errors.New("no summary points to predict from")
	}
	if err := opt.Prepare(); err != nil {
		return nil, err
	}
	gpus := 0
	if d := opt.Deployment; d != nil && d.Plan != nil {
		gpus = d.Plan.Shape.GPUs()
	}
	// The points stand in for a run on the deployment given: points that say they
	// were measured on another GPU, GPU count or precision would be scaled from the
	// wrong roofline, and their per-GPU figures multiplied by the wrong count.
	for _, p := range s.Points {
		if p.GPU != "" && opt.GPU != "" && !sameGPU(p.GPU, opt.GPU) {
			return nil, fmt.Errorf("%s: measured on GPU %q, not on the deployment's GPU %q (BudgetInput.GPU): describe the deployment the points were measured on", p.Label, p.GPU, opt.GPU)
		}
		if a, b := precisionFamily(p.Precision), precisionFamily(opt.WeightDtype); a != "" && b != "" && a != b {
			return nil, fmt.Errorf("%s: measured with %s weights, not the deployment's %s (BudgetInput.WeightDtype): describe the deployment the points were measured on", p.Label, p.Precision, opt.WeightDtype)
		}
		if p.GPUs > 0 && gpus > 0 && p.GPUs != gpus {
			return nil, fmt.Errorf("%s: measured on %d GPUs, the deployment given has %d per engine (BudgetInput.TP × BudgetInput.DP × BudgetInput.PP): its per-GPU figures would be multiplied by the wrong count; describe the deployment the points were measured on", p.Label, p.GPUs, gpus)
		}
	}
	r, basis, err := runFromSummary(s, gpus)
	if err != nil {
		return nil, err
	}
	res, err := WhatIf(r, opt, change)
	if err != nil {
		return nil, err
	}
	res.SummaryPoints = basis
	if len(res.Rows) > 0 {
		// Summary points carry no KV figure: the published row's is the capacity
		// model's for the deployment given, and says so.
		row := &res.Rows[0]
		row.Scenario, row.Basis = "published", "published summary points; KV figures from the capacity model of the deployment given (the points declare none)"
		if d := opt.Deployment; d != nil && d.Plan != nil && d.PlanErr == nil {
			row.KVCapacityTokens = d.Plan.KVTokens * int64(d.Plan.Shape.KVCaches())
			if prompt, output := meanLengths(r); output > 0 && !math.IsNaN(prompt) {
				row.RequestTokens = prompt + output
				row.KVCeiling = d.Plan.Concurrency(prompt + output)
			}
		}
	}
	note := fmt.Sprintf("built from summary points: %d published levels of %s (%s), with no requests behind them: no bootstrap intervals, no steady-state window, no validity checks of their own",
		basis.Points, strings.Join(baseNames(basis.Files), ", "), basis.Tool)
	if len(basis.Derived) > 0 {
		note += "; derived: " + strings.Join(basis.Derived, "; ")
	}
	res.Notes = append([]string{note}, res.Notes...)
	return res, nil
}

// runFromSummary turns summary points into a run of levels, one per concurrency
// (open-loop points, which have none, are left out). gpus multiplies per-GPU
// throughputs; 0 when the deployment is unknown (then only whole-deployment
// throughputs can be used).
func runFromSummary(s *summary.Summary, gpus int) (*Run, *SummaryPointsBasis, error) {
	basis := &SummaryPointsBasis{Tool: s.Tool, Files: s.Files}
	derived := map[string]bool{}
	r := &Run{RunID: "published levels of " + strings.Join(baseNames(s.Files), ", "), Source: strings.Join(s.Files, ", ")}
	pts := append([]summary.Point(nil), s.Points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Concurrency < pts[j].Concurrency })
	for _, p := range pts {
		if p.Concurrency < 1 {
			continue
		}
		var out float64
		switch {
		case p.OutputTokS != nil && (p.OutputTokSPerGPU == nil || gpus <= 0):
			out = *p.OutputTokS
		case p.OutputTokSPerGPU != nil && gpus > 0:
			out = *p.OutputTokSPerGPU * float64(gpus)
		default:
			return nil, nil, fmt.Errorf("%s: output tok/s per GPU without the deployment's GPU count (give the deployment: BudgetInput.GPU, BudgetInput.GPUs)", p.Label)
		}
		if !(out > 0) || math.IsInf(out, 0) {
			return nil, nil, fmt.Errorf("%s: output tok/s %g is not a positive number", p.Label, out)
		}
		l := Level{Level: len(r.Levels), Concurrency: int(math.Round(p.Concurrency)), OutputTokS: out, Valid: true}
		l.TTFT.P50, l.TPOT.P50 = p.TTFT.P50, p.TPOT.P50
		switch {
		case p.PerUserTokS != nil && *p.PerUserTokS > 0:
			l.PerUserTokS = *p.PerUserTokS
		case p.TPOT.P50 != nil && *p.TPOT.P50 > 0:
			l.PerUserTokS = 1 / *p.TPOT.P50
			derived["per-user speed = 1 ÷ TPOT"] = true
		}
		// Little's law: the requests decoding at once are the throughput over what
		// each sees; without a per-user speed, every request in flight.
		l.DecodeConcurrency = p.Concurrency
		if l.PerUserTokS > 0 {
			l.DecodeConcurrency = math.Min(p.Concurrency, out/l.PerUserTokS)
			derived["decode batch = output tok/s ÷ per-user speed (at most the concurrency)"] = true
		} else {
			derived["decode batch = the concurrency (no per-user speed or TPOT)"] = true
		}
		if p.InputTokens != nil && p.OutputTokens != nil {
			l.MeanPromptTokens, l.MeanOutputTokens = *p.InputTokens, *p.OutputTokens
		}
		r.Levels = append(r.Levels, l)
	}
	if len(r.Levels) == 0 {
		return nil, nil, errors.New("no summary point has a concurrency (closed-loop levels only)")
	}
	basis.Points = len(r.Levels)
	for d := range derived {
		basis.Derived = append(basis.Derived, d)
	}
	sort.Strings(basis.Derived)
	return r, basis, nil
}

func baseNames(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return out
}

// precisionFamily groups the spellings of one weight precision ("nvfp4" and
// InferenceX's "fp4"; "bf16" and "fp16", which cost the same); "" for one it does
// not know, which is then not compared.
func precisionFamily(dtype string) string {
	switch strings.ToLower(dtype) {
	case "fp4", "nvfp4", "mxfp4":
		return "fp4"
	case "int4", "w4a16", "awq", "gptq":
		return "int4"
	case "fp8", "int8":
		return strings.ToLower(dtype)
	case "bf16", "fp16", "bfloat16", "float16":
		return "16-bit"
	case "fp32", "float32":
		return "fp32"
	}
	return ""
}
