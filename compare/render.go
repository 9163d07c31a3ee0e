package compare

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// row is one line of the results table.
type row struct {
	where string
	d     *MetricDiff
}

// rows lists every test, the ceiling first; all false leaves out the untold
// tests of metrics that are not gated (the markdown table, a PR comment).
func (r *Result) rows(all bool) []row {
	var out []row
	if r.Ceiling != nil {
		out = append(out, row{"ceiling", &r.Ceiling.Diff})
	}
	for i := range r.Levels {
		for j := range r.Levels[i].Metrics {
			d := &r.Levels[i].Metrics[j]
			if d.Baseline == nil && d.Candidate == nil {
				continue // not measured on either side (goodput without SLOs)
			}
			if all || d.Gated || d.Verdict == Better || d.Verdict == Worse {
				out = append(out, row{r.Levels[i].Label, d})
			}
		}
	}
	return out
}

func (d *MetricDiff) cells() (change, ci, p, verdict string) {
	change = changeText(d)
	if change == "" {
		change = "—"
	}
	ci = "—"
	if d.Low != nil {
		ci = signedText(d.Metric, *d.Low) + " to " + signedText(d.Metric, *d.High)
	}
	p = "—"
	switch {
	case d.PAdjusted != nil:
		p = pText(*d.PAdjusted) + " (Holm)"
	case d.P != nil:
		p = pText(*d.P)
	}
	verdict = d.Verdict
	if d.Regression {
		verdict = "REGRESSION"
	}
	if d.Verdict == NotTested && d.Note != "" {
		verdict += ": " + d.Note
	}
	return change, ci, p, verdict
}

func (r *Result) method() string {
	m := "one run per side: each level's bootstrap over time blocks, drawn independently per side (z test of the log ratio); " +
		"the drift between runs is not measured, and on a real server it usually dominates: record repeats for a gate"
	if r.Method == methodRepeats {
		m = fmt.Sprintf("repeats (%d baseline, %d candidate runs): the spread between repeats (t test of the log ratio)", r.Baseline.Runs, r.Candidate.Runs)
	}
	return m
}

func sideText(s SideInfo) string {
	var facts []string
	for _, f := range []string{s.Model, s.Server, s.GPU} {
		if f != "" {
			facts = append(facts, f)
		}
	}
	return strings.Join(s.Sources, ", ") + " (" + strings.Join(facts, ", ") + ")"
}

// WriteText writes the comparison for a terminal: the verdict, what differs,
// the findings, then every test.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "candidate vs baseline: %s\n\n", r.Verdict)
	fmt.Fprintf(&b, "baseline:  %s\ncandidate: %s\n", sideText(r.Baseline), sideText(r.Candidate))
	for _, d := range r.Differences {
		fmt.Fprintf(&b, "differs:   %s\n", d)
	}
	if len(r.Unmatched) > 0 {
		fmt.Fprintf(&b, "unmatched: %s (not compared)\n", strings.Join(r.Unmatched, ", "))
	}
	fmt.Fprintf(&b, "method:    %s; gated: %s; Holm over the gated tests; threshold %.0f%%\n",
		r.method(), strings.Join(r.Gated, ", "), 100*r.Threshold)
	for _, s := range []struct {
		head string
		fs   []Finding
	}{{"Regressions", r.Regressions}, {"Improvements", r.Improvements}, {"Inconclusive (a regression of the threshold's size is not ruled out)", r.Inconclusive}} {
		if len(s.fs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", s.head)
		for _, f := range s.fs {
			fmt.Fprintf(&b, "  %s\n", f.Text)
		}
	}
	if r.Needed != nil {
		fmt.Fprintf(&b, "  to settle them: %s\n", r.Needed.Text)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "where\tmetric\tbaseline\tcandidate\tchange\t95% CI\tp\tverdict")
	for _, x := range r.rows(true) {
		change, ci, p, verdict := x.d.cells()
		name := x.d.Metric
		if x.d.Gated {
			name += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.where, name,
			valueText(x.d.Metric, x.d.Baseline), valueText(x.d.Metric, x.d.Candidate), change, ci, p, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("* gated: can fail the comparison (exit code 1)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the comparison as a PR comment: the verdict first, then
// one table of the gated tests (and any other significant difference), then the
// method in a line.
func (r *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	mark := "✅"
	if r.Regression {
		mark = "❌"
	}
	fmt.Fprintf(&b, "%s **candidate vs baseline: %s**\n\n", mark, mdEscape(r.Verdict))
	for _, f := range r.Regressions {
		fmt.Fprintf(&b, "- regression: %s\n", mdEscape(f.Text))
	}
	if r.Needed != nil {
		fmt.Fprintf(&b, "- inconclusive for %d gated tests: %s\n", len(r.Inconclusive), mdEscape(r.Needed.Text))
	}
	if len(r.Regressions) > 0 || r.Needed != nil {
		b.WriteString("\n")
	}
	b.WriteString("| where | metric | baseline | candidate | change | 95% CI | p | verdict |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, x := range r.rows(false) {
		change, ci, p, verdict := x.d.cells()
		name := "`" + x.d.Metric + "`"
		if !x.d.Gated {
			name += " (not gated)"
		}
		if x.d.Regression {
			verdict = "**" + verdict + "**"
		}
		if x.d.Verdict == NotTested {
			verdict = NotTested // the reason is in the text output; the table stays narrow
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", x.where, name,
			mdEscape(valueText(x.d.Metric, x.d.Baseline)), mdEscape(valueText(x.d.Metric, x.d.Candidate)),
			change, ci, mdEscape(p), mdEscape(verdict))
	}
	fmt.Fprintf(&b, "\nBaseline %s; candidate %s.", mdEscape(sideText(r.Baseline)), mdEscape(sideText(r.Candidate)))
	if len(r.Differences) > 0 {
		fmt.Fprintf(&b, " Differs: %s.", mdEscape(strings.Join(r.Differences, "; ")))
	}
	fmt.Fprintf(&b, " Method: %s; Holm over the gated tests; threshold %.0f%%.\n", mdEscape(r.method()), 100*r.Threshold)
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape keeps a table cell one cell: pipes and line breaks escaped.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
