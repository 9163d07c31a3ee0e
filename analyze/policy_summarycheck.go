package analyze

import (
	"fmt"
	"math"
	"strings"

	"github.com/ceiling-llm/ceiling/summary"
)

// Summary-level points beside a measured run: another tool's published summaries
// (an llm-d benchmark report, InferenceX points; importer.Summary) set against the
// measured run's level at the same concurrency (or rate). They are measurements,
// but of a whole configuration at one load with no requests behind them in the
// file: they are marked summary-level everywhere and never mixed into the run's
// figures. Only an exact coordinate match is compared; nothing is interpolated.

// CompareSummary sets a file of summary-level points beside measured run r.
func CompareSummary(r *Run, opt Options, s *summary.Summary) *SummaryCheck {
	sc := &SummaryCheck{SummaryLevel: true, Tool: s.Tool, Version: s.Version, MeasuredRun: r.RunID,
		Points: []SummaryPointCheck{}, Notes: []string{}}
	if len(s.Files) > 0 {
		sc.Source = s.Files[0]
	}
	gpus, basis := 1, "one GPU (the measured run was given no --gpus)"
	if opt.GPUs > 0 || opt.TP > 0 {
		gpus, basis = opt.Shape().GPUs(), "--gpus of the measured run"
	}
	sc.MeasuredGPUs, sc.GPUsBasis = gpus, basis
	lengthsNoted := false
	for _, p := range s.Points {
		pc := SummaryPointCheck{Label: p.Label, Concurrency: p.Concurrency, Rate: p.Rate}
		pc.Theirs = Figures{OutputTokSPerGPU: p.OutputTokSPerGPU, PerUserTokS: p.PerUserTokS, TTFT: p.TTFT.P50, TPOT: p.TPOT.P50}
		if pc.Theirs.TTFT == nil {
			pc.Theirs.TTFT = p.TTFT.Mean
		}
		if pc.Theirs.TPOT == nil {
			pc.Theirs.TPOT = p.TPOT.Mean
		}
		if pc.Theirs.OutputTokSPerGPU == nil && p.OutputTokS != nil && p.GPUs > 0 {
			pc.Theirs.OutputTokSPerGPU = pf(*p.OutputTokS / float64(p.GPUs))
		}
		if p.Model != "" && r.Model != "" && !sameModel(p.Model, r.Model) {
			sc.Notes = appendOnce(sc.Notes, fmt.Sprintf("the points measured model %q, the run %q: these are different models", p.Model, r.Model))
		}
		if p.GPUs > 0 && p.GPUs != gpus {
			sc.Notes = appendOnce(sc.Notes, fmt.Sprintf("%s ran on %d GPUs, the measured run on %d (%s): per-GPU figures compare deployments of different sizes", p.Label, p.GPUs, gpus, basis))
		}
		for _, l := range r.Levels {
			match := (p.Concurrency > 0 && l.Rate == 0 && float64(l.Concurrency) == p.Concurrency) ||
				(p.Rate > 0 && l.Rate > 0 && math.Abs(l.Rate-p.Rate) <= 1e-9*p.Rate)
			if !match || !l.Valid {
				continue
			}
			lvl := l.Level
			pc.MeasuredLevel = &lvl
			if note := lengthsDiffer(p.InputTokens, p.OutputTokens, l); note != "" && !lengthsNoted {
				sc.Notes = append(sc.Notes, note) // once: the first compared level stands for all
				lengthsNoted = true
			}
			pc.Measured = Figures{OutputTokSPerGPU: pf(l.OutputTokS / float64(gpus)), TTFT: l.TTFT.P50, TPOT: l.TPOT.P50}
			if l.PerUserTokS > 0 {
				pc.Measured.PerUserTokS = pf(l.PerUserTokS)
			}
			pc.DiffPct = Figures{
				OutputTokSPerGPU: errPct(pc.Theirs.OutputTokSPerGPU, pc.Measured.OutputTokSPerGPU),
				PerUserTokS:      errPct(pc.Theirs.PerUserTokS, pc.Measured.PerUserTokS),
				TTFT:             errPct(pc.Theirs.TTFT, pc.Measured.TTFT),
				TPOT:             errPct(pc.Theirs.TPOT, pc.Measured.TPOT),
			}
			break
		}
		sc.Points = append(sc.Points, pc)
	}
	named := false
	for _, p := range s.Points {
		named = named || p.Model != ""
	}
	if !named && len(s.Points) > 0 {
		// A table of published levels names no model: nothing can tell it was
		// measured on another deployment, so the reader is told it is assumed.
		sc.Notes = append(sc.Notes, fmt.Sprintf("the points name no model: they are set beside run %s as if they measured the same model and deployment", r.RunID))
	}
	sc.Notes = append(sc.Notes, "summary-level points: the other tool's own statistics (its percentile and TPOT definitions), with no requests behind them to re-derive")
	sc.Notes = append(sc.Notes, s.Warnings...)
	return sc
}

// lengthsDiffer says when a point's request lengths differ from the measured
// level's by more than a tenth: their throughput then measures another workload.
func lengthsDiffer(in, out *float64, l Level) string {
	differ := func(theirs *float64, ours float64) bool {
		return theirs != nil && ours > 0 && math.Abs(*theirs-ours) > 0.1*ours
	}
	if !differ(in, l.MeanPromptTokens) && !differ(out, l.MeanOutputTokens) {
		return ""
	}
	show := func(v *float64) string {
		if v == nil {
			return "?"
		}
		return fmt.Sprintf("%.0f", *v)
	}
	return fmt.Sprintf("the points were measured with %s prompt + %s output tokens, the run's c=%d level with %.0f + %.0f: another workload, so the figures differ for that reason too",
		show(in), show(out), l.Concurrency, l.MeanPromptTokens, l.MeanOutputTokens)
}

// sameModel compares model names without their organisation prefix
// ("zai-org/GLM-4.6" is "GLM-4.6"), case-insensitively.
func sameModel(a, b string) bool {
	base := func(s string) string {
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			s = s[i+1:]
		}
		return strings.ToLower(strings.TrimSpace(s))
	}
	return base(a) == base(b)
}

func appendOnce(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}
