package analysistext

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// WriteWhatIf prints the what-if tables (text, markdown) or the WhatIfDoc (json);
// with a, the analysis follows the tables (or is embedded in the JSON).
func WriteWhatIf(w io.Writer, results []*analyze.WhatIfResult, a *analyze.Analysis, format string) error {
	if format == FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(analyze.WhatIfDoc{Schema: analyze.WhatIfSchema, WhatIf: results, Analysis: a}); err != nil {
			return fmt.Errorf("writing the what-if as JSON: %w", err)
		}
		return nil
	}
	md := format == FormatMarkdown || format == "md"
	if !md && format != FormatText && format != "" {
		return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats(), ", "))
	}
	var b strings.Builder
	for _, res := range results {
		writeWhatIf(&b, res, md)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if a == nil {
		return nil
	}
	_, _ = io.WriteString(w, "\n")
	return Write(w, a, format)
}

func writeWhatIf(b *strings.Builder, res *analyze.WhatIfResult, md bool) {
	title := "What-if of run " + res.RunID
	if res.Change != "" {
		title += ": " + res.Change + " (PREDICTED)"
	}
	heading(b, md, 1, title)
	w := &table{head: []string{"", "", "shape", "KV tokens", "KV ceiling", "per cache at max len", "ceiling", "out tok/s"}}
	for _, row := range res.Rows {
		kind := "measured"
		if row.Predicted {
			kind = "PREDICTED"
		}
		w.rows = append(w.rows, []string{row.Scenario, kind, row.Shape, groupDigits(row.KVCapacityTokens), numCell(row.KVCeiling, 1),
			optCell(row.AtMaxModelLen, 2), optCell(row.Ceiling, 1), outAtCell(row)})
	}
	_ = w.write(b, md)
	for _, row := range res.Rows {
		if row.Predicted {
			fmt.Fprintf(b, "basis: %s\n", textOrMD(row.Basis, md))
		}
	}
	if len(res.Levels) > 0 {
		b.WriteString("\n")
		heading(b, md, 2, fmt.Sprintf("Every level at the same concurrency: measured beside PREDICTED (%.0f%% interval)", 100*res.Interval.Nominal))
		t := &table{head: []string{"c", "out tok/s", "PREDICTED", "user tok/s", "PREDICTED", "TTFT p50 ms", "PREDICTED", "TPOT p50 ms", "PREDICTED", "PREDICTED out tok/s at the measured user speed"}}
		var beyond []string
		for _, l := range res.Levels {
			row := []string{numCell(l.Concurrency, 0), numCell(l.Measured.OutputTokS, 0)}
			if l.Beyond != "" {
				label := "beyond model"
				if l.Invalid {
					label = "invalid"
				}
				row = append(row, label, numCell(l.Measured.PerUserTokS, 1), label, optCell(msP(l.Measured.TTFT), 0), label,
					optCell(msP(l.Measured.TPOT), 1), label, "—")
				beyond = append(beyond, fmt.Sprintf("c=%s: %s", numCell(l.Concurrency, 0), l.Beyond))
			} else {
				ttft := rangeCell(l.TTFT, 1000, 0)
				if l.TTFTBeyond != "" {
					ttft = "queueing"
					beyond = append(beyond, fmt.Sprintf("c=%s: %s", numCell(l.Concurrency, 0), l.TTFTBeyond))
				}
				row = append(row, rangeCell(l.OutputTokS, 1, 0), numCell(l.Measured.PerUserTokS, 1), rangeCell(l.PerUserTokS, 1, 1),
					optCell(msP(l.Measured.TTFT), 0), ttft, optCell(msP(l.Measured.TPOT), 1), rangeCell(l.TPOT, 1000, 1),
					optCell(l.AtMeasuredSpeed, 0))
			}
			t.rows = append(t.rows, row)
		}
		_ = t.write(b, md)
		for _, s := range beyond {
			fmt.Fprintf(b, "%s\n", textOrMD(s, md))
		}
		fmt.Fprintf(b, "model: %s\nintervals: %s\n", textOrMD(res.Model, md), textOrMD(res.IntervalMethod, md))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(b, "note: %s\n", textOrMD(n, md))
	}
	b.WriteString("\n")
}

// outAtCell prints a ceiling row's throughput with the concurrency it is at, and
// marks an extrapolated one.
func outAtCell(row analyze.WhatIfRow) string {
	s := optCell(row.OutputTokS, 0)
	if row.OutputTokS != nil && row.OutputTokSAt != nil {
		s += " (c=" + numCell(*row.OutputTokSAt, 0) + ")"
		if row.Extrapolation != "" {
			s += " EXTRAPOLATED"
		}
	}
	return s
}

// rangeCell prints a predicted value and its interval, scaled.
func rangeCell(r *analyze.Range, scale float64, prec int) string {
	if r == nil {
		return "—"
	}
	return fmt.Sprintf("%s [%s–%s]", numCell(r.Value*scale, prec), numCell(r.Low*scale, prec), numCell(r.High*scale, prec))
}

func msP(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return pf(*v * 1000)
}
