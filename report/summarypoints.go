package report

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The "Other tools' summary-level points" section: an llm-d benchmark report or
// InferenceX points given beside the measured runs (analyze.SummaryCheck), one
// line per point with their figure, the measured one and the difference. They are
// summaries measured elsewhere: named so in the title and every line, never drawn
// into the measured curves.

// summarySections builds the section, or nothing without summary-level points.
func summarySections(a *analyze.Analysis) []section {
	if len(a.SummaryChecks) == 0 {
		return nil
	}
	sec := section{ID: "summary-points", Title: "Other tools' summary-level points",
		Intro: "Published summaries of other benchmarks (one configuration at one load, no requests behind them) beside the measured level at the same concurrency or rate: their own statistics and definitions, with the difference in percent. Nothing is interpolated."}
	for _, sc := range a.SummaryChecks {
		for _, p := range sc.Points {
			load := fmt.Sprintf("c=%g", p.Concurrency)
			if p.Rate > 0 {
				load = fmt.Sprintf("%g req/s", p.Rate)
			}
			head := fmt.Sprintf("SUMMARY-LEVEL · %s · %s · %s", sc.Tool, p.Label, load)
			if p.MeasuredLevel == nil {
				sec.Notes = append(sec.Notes, head+": run "+sc.MeasuredRun+" measured no level at this load.")
				continue
			}
			var parts []string
			add := func(name, unit string, scale float64, theirs, measured, diff *float64, digits int) {
				if theirs == nil {
					return
				}
				s := fmt.Sprintf("%s %.*f%s", name, digits, *theirs*scale, unit)
				if measured != nil {
					s += fmt.Sprintf(" (measured %.*f", digits, *measured*scale)
					if diff != nil {
						s += fmt.Sprintf(", %+.0f%%", *diff)
					}
					s += ")"
				}
				parts = append(parts, s)
			}
			add("output tok/s/GPU", "", 1, p.Theirs.OutputTokSPerGPU, p.Measured.OutputTokSPerGPU, p.DiffPct.OutputTokSPerGPU, 1)
			add("tok/s/user", "", 1, p.Theirs.PerUserTokS, p.Measured.PerUserTokS, p.DiffPct.PerUserTokS, 1)
			add("TTFT", " ms", 1000, p.Theirs.TTFT, p.Measured.TTFT, p.DiffPct.TTFT, 0)
			add("TPOT", " ms", 1000, p.Theirs.TPOT, p.Measured.TPOT, p.DiffPct.TPOT, 1)
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s vs level %d of %s: %s.", head, *p.MeasuredLevel, sc.MeasuredRun, strings.Join(parts, ", ")))
		}
		// The file's notes: points left out for impossible values, other models
		// or deployment sizes.
		for _, n := range sc.Notes {
			sec.Notes = append(sec.Notes, fmt.Sprintf("SUMMARY-LEVEL · %s · note: %s", sc.Tool, n))
		}
	}
	return []section{sec}
}
