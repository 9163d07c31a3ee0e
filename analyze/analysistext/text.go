package analysistext

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/safetext"
)

// Output formats of `ceiling analyze`.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Formats lists the output formats Write accepts.
func Formats() []string { return []string{FormatText, FormatMarkdown, FormatJSON} }

// Write prints a in the given format: "text" (aligned tables for a terminal),
// "markdown" (to paste into a deployment review) or "json" (the Analysis JSON, a
// public interface).
func Write(w io.Writer, a *analyze.Analysis, format string) error {
	switch format {
	case FormatJSON:
		data, err := json.MarshalIndent(a, "", "  ")
		if err != nil {
			return fmt.Errorf("writing the analysis as JSON: %w", err)
		}
		// Printed to a terminal by default: no raw C1 or bidi control (the values
		// decode the same).
		if _, err := w.Write(append(safetext.Escaped(data), '\n')); err != nil {
			return fmt.Errorf("writing the analysis as JSON: %w", err)
		}
		return nil
	case FormatText, "":
		return writeDoc(w, a, false)
	case FormatMarkdown, "md":
		return writeDoc(w, a, true)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats(), ", "))
}

// table is a header and rows of cells, printed aligned (text) or as a Markdown table.
type table struct {
	head []string
	rows [][]string
}

func (t *table) write(w io.Writer, md bool) error {
	if md {
		esc := func(cells []string) string {
			out := make([]string, len(cells))
			for i, c := range cells {
				out[i] = mdEscape(c)
			}
			return "| " + strings.Join(out, " | ") + " |\n"
		}
		var b strings.Builder
		b.WriteString(esc(t.head))
		sep := make([]string, len(t.head))
		for i := range sep {
			sep[i] = "---:"
			if i == 0 {
				sep[i] = "---"
			}
		}
		b.WriteString("| " + strings.Join(sep, " | ") + " |\n")
		for _, r := range t.rows {
			b.WriteString(esc(r))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	safe := func(cells []string) string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = textSafe(c)
		}
		return strings.Join(out, "\t") + "\t"
	}
	fmt.Fprintln(tw, safe(t.head))
	for _, r := range t.rows {
		fmt.Fprintln(tw, safe(r))
	}
	return tw.Flush()
}

// mdSpecial are the ASCII punctuation characters that can start Markdown or HTML
// syntax mid-line: HTML tags and comments (<), entities (&), code spans (`),
// emphasis (* _ ~), links and images ([ ] !), table cells (|), headings (#), math
// ($) and the escape itself. A backslash makes each literal (CommonMark: any ASCII
// punctuation may be escaped).
const mdSpecial = "\\`*_{}[]<>#|~&$!"

// mdEscape makes server- or user-supplied text literal in Markdown: an unclosed
// <!-- would hide the rest of the document, a <script> would run in renderers that
// pass HTML, a | would split a table cell, a newline would start a heading or list.
// Line breaks and tabs become spaces, every character that controls a terminal or
// the text's direction a visible escape (safetext.Line), so that a terminal escape
// sequence or a bidi override does not act on whoever views the file.
func mdEscape(s string) string { return escape(s, true) }

// textSafe keeps server- or user-supplied text from rewriting or splitting the text
// output: characters that control a terminal or the text's direction (escape
// sequences, C1 controls, bidi overrides) become visible escapes, line breaks and
// tabs (which would break the aligned tables) spaces: safetext.Line.
func textSafe(s string) string { return escape(s, false) }

func escape(s string, md bool) string {
	s = safetext.Line(s)
	if !md {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for _, r := range s {
		switch {
		case md && r < 0x80 && strings.ContainsRune(mdSpecial, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// writeDoc prints every run (levels, capacity, ceilings, warnings) and, for several
// runs, a side-by-side comparison.
func writeDoc(w io.Writer, a *analyze.Analysis, md bool) error {
	var b strings.Builder
	if len(a.Runs) > 1 {
		heading(&b, md, 1, "Runs compared")
		if err := compareTable(a).write(&b, md); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	writePredictions(&b, a, md)
	writeSummaryChecks(&b, a, md)
	writeMatchedSpeed(&b, a.MatchedSpeed, md)
	for i, r := range a.Runs {
		if i > 0 || len(a.Runs) > 1 {
			b.WriteString("\n")
		}
		writeRun(&b, &r, md)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func heading(b *strings.Builder, md bool, level int, title string) {
	if md {
		fmt.Fprintf(b, "%s %s\n\n", strings.Repeat("#", level+1), mdEscape(title))
		return
	}
	title = textSafe(title)
	fmt.Fprintf(b, "%s\n", title)
	if level <= 1 {
		fmt.Fprintf(b, "%s\n", strings.Repeat("=", len([]rune(title))))
	}
}

func compareTable(a *analyze.Analysis) *table {
	t := &table{head: []string{"run", "source", "model", "levels", "peak tok/s", "at", "ceiling", "binding"}}
	for _, r := range a.Runs {
		peak, at := math.NaN(), ""
		for _, l := range r.Levels {
			if math.IsNaN(peak) || l.OutputTokS > peak {
				peak, at = l.OutputTokS, offeredLabel(l)
			}
		}
		t.rows = append(t.rows, []string{r.RunID, r.Source, r.Model, fmt.Sprint(len(r.Levels)),
			numCell(peak, 1), at, optCell(r.Ceiling.Concurrency, 1), bindingCell(r.Ceiling)})
	}
	return t
}

func writeRun(b *strings.Builder, r *analyze.Run, md bool) {
	title := "Run " + r.RunID
	if r.RunID == "" {
		title = "Run (no id)"
	}
	heading(b, md, 1, title)
	line := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		if md {
			s = mdEscape(s) + "  "
		} else {
			s = textSafe(s)
		}
		b.WriteString(s + "\n")
	}
	line("source: %s", r.Source)
	if r.Model != "" {
		line("model: %s", r.Model)
	}
	var server struct {
		Kind    string `json:"kind"`
		Version string `json:"version"`
	}
	if len(r.Server) > 0 && json.Unmarshal(r.Server, &server) == nil && server.Kind != "" {
		line("server: %s", strings.TrimSpace(server.Kind+" "+server.Version))
	}
	if s := sloText(r.SLO); s != "" {
		line("SLO: %s", s)
	}
	b.WriteString("\n")

	writeSearch(b, r, md, line)

	heading(b, md, 2, "Levels")
	_ = levelTable(r).write(b, md)
	b.WriteString("\n")
	if lines := invalidLines(r.Levels); len(lines) > 0 {
		for _, s := range lines {
			line("%s", s)
		}
		b.WriteString("\n")
	}

	if t := errorTable(r); t != nil {
		heading(b, md, 2, "Errors (by kind and the server's message)")
		_ = t.write(b, md)
		b.WriteString("\n")
	}

	if t := serverTable(r); t != nil {
		heading(b, md, 2, "Server counters (inside each window)")
		_ = t.write(b, md)
		b.WriteString("\n")
	}

	if t := gpuTable(r); t != nil {
		heading(b, md, 2, "GPU power and energy (inside each window)")
		_ = t.write(b, md)
		b.WriteString("\n")
	}

	heading(b, md, 2, "Latency percentiles")
	_ = latencyTable(r).write(b, md)
	b.WriteString("\n")
	writeTail(b, r, md, line)
	writeIntervals(b, r, md)
	writeRepeats(b, r, md)

	if c := r.Capacity; c != nil {
		heading(b, md, 2, "Capacity")
		for _, s := range capacityLines(c) {
			line("%s", s)
		}
		if k := r.KVCheck; k != nil {
			line("KV check: %s", k.Verdict)
		}
		b.WriteString("\n")
	}
	if f := r.Fit.USL; f != nil {
		heading(b, md, 2, "Fit")
		nmax := f.NoPeak
		if nmax == "" {
			nmax = "none"
		}
		if f.NMax != nil {
			nmax = fmt.Sprintf("%.1f", *f.NMax)
		}
		line("USL: σ = %.4g, κ = %.4g, λ = %.4g tok/s per request, Nmax = %s, R² = %.4f", f.Sigma, f.Kappa, f.Lambda, nmax, f.R2)
		b.WriteString("\n")
	}

	heading(b, md, 2, "Ceilings")
	c := r.Ceilings
	line("kv %s · batch %s · errors %s · knee %s · slo %s", optCell(c.KV, 1), concCell(c.Batch), concCell(c.Errors), concCell(c.Knee), concCell(c.SLO))
	if r.Ceiling.Concurrency != nil {
		line("realistic ceiling: %s concurrent requests, bound by %s", concCell(r.Ceiling.Concurrency), r.Ceiling.Binding)
	} else {
		line("realistic ceiling: not found in the tested range")
	}
	if p := r.Ceiling.Prediction; p != nil {
		if p.ValidUpTo > 0 {
			line("predicted (not reached by valid data up to %g): %s ~%.0f", p.ValidUpTo, p.Limit, p.Concurrency)
		} else {
			line("predicted (no valid level): %s ~%.0f", p.Limit, p.Concurrency)
		}
	}
	if s := ceilingStabilityLine(r); s != "" {
		line("%s", s)
	}
	if s := repeatCeilingLine(r); s != "" {
		line("%s", s)
	}
	if c := r.Criteria; c != nil && c.From != "defaults" {
		line("%s", c.Text)
	}
	for _, e := range r.Ceiling.Evidence {
		if md {
			b.WriteString("- " + mdEscape(e) + "\n")
		} else {
			b.WriteString("  - " + textSafe(e) + "\n")
		}
	}
	b.WriteString("\n")
	writeDecision(b, r, md)

	heading(b, md, 2, "Warnings")
	if len(r.Warnings) == 0 {
		line("none")
	}
	for _, wn := range r.Warnings {
		if md {
			b.WriteString("- " + mdEscape(wn) + "\n")
		} else {
			b.WriteString("  - " + textSafe(wn) + "\n")
		}
	}
}

func levelTable(r *analyze.Run) *table {
	t := &table{head: []string{"level", "offered", "req", "err", "window", "out tok/s", "naive tok/s",
		"req/s", "goodput/s", "decode", "queue+prefill", "user tok/s", "mean in", "mean out", "valid"}}
	for _, l := range r.Levels {
		t.rows = append(t.rows, []string{
			fmt.Sprint(l.Level), offeredLabel(l), fmt.Sprint(l.Requests), fmt.Sprint(l.Errors),
			durCell(pf(l.WindowS)), numCell(l.OutputTokS, 1), numCell(l.NaiveOutputTokS, 1),
			numCell(l.RequestS, 2), optCell(l.GoodputRequestS, 2), numCell(l.DecodeConcurrency, 2),
			numCell(l.WaitingConcurrency, 2), numCell(l.PerUserTokS, 1),
			numCell(l.MeanPromptTokens, 0), numCell(l.MeanOutputTokens, 0), validCell(l),
		})
	}
	return t
}

func latencyTable(r *analyze.Run) *table {
	t := &table{head: []string{"level", "offered", "TTFT p50", "TTFT p99", "TTFC p50", "TPOT p50", "TPOT p99",
		"ITL p50", "ITL p99", "E2E p50", "E2E p99"}}
	for _, l := range r.Levels {
		t.rows = append(t.rows, []string{
			fmt.Sprint(l.Level), offeredLabel(l),
			durCell(l.TTFT.P50), durCell(l.TTFT.P99), durCell(l.TTFC.P50),
			durCell(l.TPOT.P50), durCell(l.TPOT.P99), durCell(l.ITL.P50), durCell(l.ITL.P99),
			durCell(l.E2E.P50), durCell(l.E2E.P99),
		})
	}
	return t
}

func capacityLines(c *analyze.Capacity) []string {
	var out []string
	if c.KVCapacityTokens != nil {
		out = append(out, fmt.Sprintf("KV cache: %d tokens (%s)", *c.KVCapacityTokens, c.Source))
	}
	if c.KVCapacityMinTokens != nil && c.KVCapacityMaxTokens != nil {
		out = append(out, fmt.Sprintf("KV cache between %d and %d tokens: the server does not say which (no figure is declared)", *c.KVCapacityMinTokens, *c.KVCapacityMaxTokens))
	}
	if c.SourceDetail != "" {
		out = append(out, "from: "+c.SourceDetail)
	}
	if c.Layout != "" && c.Layout != analyze.LayoutShared {
		l := "layout: " + c.Layout
		if c.LayoutEvidence != "" {
			l += " (" + c.LayoutEvidence + ")"
		}
		out = append(out, l)
	}
	if c.DeclaredKVCapacityTokens != nil && c.ModelledKVCapacityTokens != nil {
		out = append(out, fmt.Sprintf("declared %d tokens, modelled %d tokens", *c.DeclaredKVCapacityTokens, *c.ModelledKVCapacityTokens))
	}
	if c.KVBytesPerToken != nil {
		out = append(out, fmt.Sprintf("KV bytes per token per GPU: %d", *c.KVBytesPerToken))
	}
	if c.ConcurrencyAtMaxModelLen != nil && c.MaxModelLen != nil {
		out = append(out, fmt.Sprintf("concurrency at max_model_len %d: %.2f", *c.MaxModelLen, *c.ConcurrencyAtMaxModelLen))
	}
	if c.ConcurrencyAtMeanRequest != nil && c.MeanRequestTokens != nil {
		out = append(out, fmt.Sprintf("concurrency at the mean request (%.0f tokens): %.1f", *c.MeanRequestTokens, *c.ConcurrencyAtMeanRequest))
	}
	if ps := c.PrefixSharing; ps != nil && ps.Text != "" {
		out = append(out, ps.Text)
	}
	if c.ConcurrencyAtP99Request != nil && c.P99RequestTokens != nil {
		out = append(out, fmt.Sprintf("concurrency at the p99 request (%.0f tokens): %.1f", *c.P99RequestTokens, *c.ConcurrencyAtP99Request))
	}
	if g := c.Budget; g != nil {
		const gib = 1 << 30
		out = append(out, fmt.Sprintf("budget per GPU (%s, %d GPUs, TP %d): %.1f GiB × %.2f utilization − %.1f GiB weights − %.1f GiB reserve = %.1f GiB for KV (%s)",
			g.GPU, g.GPUs, g.TP, float64(g.MemoryBytes)/gib, g.Utilization, float64(g.WeightsBytes)/gib,
			float64(g.ReserveBytes)/gib, float64(g.KVBudgetBytes)/gib, g.KVDtype))
		if m := g.ReserveModel; m != nil {
			out = append(out, "reserve modelled from "+m.Assumption)
		}
	}
	if r := c.KVBudgetRange; r != nil {
		const gib = 1 << 30
		out = append(out, fmt.Sprintf("KV budget as the reserve goes: %.1f–%.1f GiB per GPU (%s–%s tokens a KV cache): %.1f GiB flat reserve above, %.1f GiB modelled from %s; the reserve moves the budget by %.0f%%, so a modelled capacity rests on it",
			float64(r.LowBytes)/gib, float64(r.HighBytes)/gib, groupDigits(r.LowTokens), groupDigits(r.HighTokens),
			float64(r.FlatReserveBytes)/gib, float64(r.ModelledBytes)/gib, r.Assumption, r.MovesPercent()))
	}
	return out
}

func sloText(s analyze.SLO) string {
	var parts []string
	if s.TTFT != nil {
		parts = append(parts, "TTFT ≤ "+durCell(s.TTFT))
	}
	if s.TPOT != nil {
		parts = append(parts, "TPOT ≤ "+durCell(s.TPOT))
	}
	if s.E2E != nil {
		parts = append(parts, "E2E ≤ "+durCell(s.E2E))
	}
	return strings.Join(parts, ", ")
}

func bindingCell(c analyze.Ceiling) string {
	if c.Binding == "" {
		return "—"
	}
	return c.Binding
}

// validCell is the level table's validity column: "yes", or "NO" (the reason is
// listed under the table by invalidLines).
func validCell(l analyze.Level) string {
	if l.Valid {
		return "yes"
	}
	return "NO"
}

// invalidLines name each invalid level and why, for the text and markdown outputs.
func invalidLines(levels []analyze.Level) []string {
	var out []string
	for _, l := range levels {
		if !l.Valid {
			out = append(out, fmt.Sprintf("invalid: level %d (%s): %s", l.Level, offeredLabel(l), l.InvalidReason))
		}
	}
	return out
}
