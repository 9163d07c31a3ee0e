package analysistext

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// writePredictions writes each planner prediction beside its measured run: one
// row per predicted point, predicted and measured figures and the error, then the
// flags. Every heading and column says PREDICTED.
func writePredictions(b *strings.Builder, a *analyze.Analysis, md bool) {
	for _, pc := range a.Predictions {
		heading(b, md, 1, fmt.Sprintf("PREDICTED by %s beside measured run %s", pc.Planner, pc.MeasuredRun))
		fmt.Fprintf(b, "prediction: %s (%s, not measured); measured per-GPU figures divide by %d GPU(s) (%s)\n",
			pc.Source, pc.Tool, pc.MeasuredGPUs, pc.GPUsBasis)
		t := &table{head: []string{"point", "c", "PREDICTED tok/s/GPU", "measured", "err", "PREDICTED tok/s/user", "measured", "err",
			"PREDICTED TTFT ms", "measured p50", "err", "PREDICTED TPOT ms", "measured p50", "err", "KV holds", "measured at"}}
		for _, p := range pc.Points {
			ms := func(v *float64) *float64 {
				if v == nil {
					return nil
				}
				return pf(*v * 1000)
			}
			t.rows = append(t.rows, []string{p.Label, numCell(p.Concurrency, 0),
				optCell(p.Predicted.OutputTokSPerGPU, 1), optCell(p.Measured.OutputTokSPerGPU, 1), pctCell(p.ErrPct.OutputTokSPerGPU),
				optCell(p.Predicted.PerUserTokS, 1), optCell(p.Measured.PerUserTokS, 1), pctCell(p.ErrPct.PerUserTokS),
				optCell(ms(p.Predicted.TTFT), 0), optCell(ms(p.Measured.TTFT), 0), pctCell(p.ErrPct.TTFT),
				optCell(ms(p.Predicted.TPOT), 1), optCell(ms(p.Measured.TPOT), 1), pctCell(p.ErrPct.TPOT),
				optCell(p.KVHolds, 0), p.MeasuredAt})
		}
		_ = t.write(b, md)
		if pc.MedianAbsErrPct != nil {
			fmt.Fprintf(b, "median absolute error of the predicted tok/s/GPU over the points measured: %.0f%%\n", *pc.MedianAbsErrPct)
		}
		for _, f := range pc.Flags {
			fmt.Fprintf(b, "FLAG: %s\n", textOrMD(f, md))
		}
		for _, n := range pc.Notes {
			fmt.Fprintf(b, "note: %s\n", textOrMD(n, md))
		}
		b.WriteString("\n")
	}
}

// pctCell is a signed percentage, "—" when unknown.
func pctCell(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%+.0f%%", *v)
}

func textOrMD(s string, md bool) string {
	if md {
		return mdEscape(s)
	}
	return textSafe(s)
}

// writeMatchedSpeed writes the comparison at the same per-user speeds.
func writeMatchedSpeed(b *strings.Builder, m *analyze.MatchedSpeed, md bool) {
	if m == nil {
		return
	}
	heading(b, md, 1, "At the same per-user speed (tok/s per GPU, $ per million output tokens)")
	head := []string{"user tok/s"}
	for _, c := range m.Curves {
		head = append(head, c.Name)
	}
	t := &table{head: head}
	for i, s := range m.Speeds {
		row := []string{numCell(s, 1)}
		for _, c := range m.Curves {
			cell := optCell(c.OutputTokSPerGPU[i], 1)
			if c.CostPerMOutput[i] != nil {
				cell += fmt.Sprintf(" ($%.3f)", *c.CostPerMOutput[i])
			}
			row = append(row, cell)
		}
		t.rows = append(t.rows, row)
	}
	_ = t.write(b, md)
	if m.GPUHourCost == nil {
		b.WriteString("no --gpu-hour-cost given: no cost per million tokens\n")
	} else {
		fmt.Fprintf(b, "cost at $%.2f per GPU-hour for every run\n", *m.GPUHourCost)
	}
	fmt.Fprintf(b, "method: %s\n\n", textOrMD(m.Method, md))
}
