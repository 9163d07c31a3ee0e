package analysistext

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// Another tool's summary-level points beside the measured run.

// writeSummaryChecks writes each summary-level file beside its measured run.
func writeSummaryChecks(b *strings.Builder, a *analyze.Analysis, md bool) {
	for _, sc := range a.SummaryChecks {
		heading(b, md, 1, fmt.Sprintf("SUMMARY-LEVEL points from %s beside measured run %s", sc.Tool, sc.MeasuredRun))
		what := "summaries, no per-request data"
		if sc.Version != "" {
			what = sc.Version + "; " + what
		}
		fmt.Fprintf(b, "source: %s (%s); measured per-GPU figures divide by %d GPUs (%s)\n",
			textOrMD(sc.Source, md), what, sc.MeasuredGPUs, sc.GPUsBasis)
		t := &table{head: []string{"point", "c", "rate", "their tok/s/GPU", "measured", "diff", "their tok/s/user", "measured", "diff",
			"their TTFT ms", "measured p50", "diff", "their TPOT ms", "measured p50", "diff", "level"}}
		ms := func(v *float64) *float64 {
			if v == nil {
				return nil
			}
			return pf(*v * 1000)
		}
		for _, p := range sc.Points {
			lvl := "none at this load"
			if p.MeasuredLevel != nil {
				lvl = fmt.Sprint(*p.MeasuredLevel)
			}
			var rate *float64 // a closed-loop point has no request rate
			if p.Rate > 0 {
				rate = pf(p.Rate)
			}
			t.rows = append(t.rows, []string{textOrMD(p.Label, md), numCell(p.Concurrency, 0), optCell(rate, 2),
				optCell(p.Theirs.OutputTokSPerGPU, 1), optCell(p.Measured.OutputTokSPerGPU, 1), pctCell(p.DiffPct.OutputTokSPerGPU),
				optCell(p.Theirs.PerUserTokS, 1), optCell(p.Measured.PerUserTokS, 1), pctCell(p.DiffPct.PerUserTokS),
				optCell(ms(p.Theirs.TTFT), 0), optCell(ms(p.Measured.TTFT), 0), pctCell(p.DiffPct.TTFT),
				optCell(ms(p.Theirs.TPOT), 1), optCell(ms(p.Measured.TPOT), 1), pctCell(p.DiffPct.TPOT), lvl})
		}
		_ = t.write(b, md)
		for _, n := range sc.Notes {
			fmt.Fprintf(b, "note: %s\n", textOrMD(n, md))
		}
		b.WriteString("\n")
	}
}
