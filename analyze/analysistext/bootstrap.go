package analysistext

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// writeIntervals writes the levels' bootstrap confidence intervals as a table.
func writeIntervals(b *strings.Builder, r *analyze.Run, md bool) {
	bs := r.Bootstrap
	if bs == nil {
		return
	}
	heading(b, md, 2, fmt.Sprintf("Confidence intervals (%.0f%%, bootstrap of %d resamples)", 100*bs.Confidence, bs.Resamples))
	t := &table{head: []string{"level", "offered", "out tok/s", "req/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "blocks"}}
	for _, l := range r.Levels {
		c := l.CI
		if c == nil {
			continue
		}
		if analyze.NoCompletions(l) { // nothing measured: no interval, not "too short" nor 0–0
			t.rows = append(t.rows, []string{fmt.Sprint(l.Level), offeredLabel(l), "—", "—", "—", "—", "—", "—", numCell(c.Blocks, 0)})
			continue
		}
		t.rows = append(t.rows, []string{fmt.Sprint(l.Level), offeredLabel(l),
			rateInterval(c.OutputTokS, 1), rateInterval(c.RequestS, 2),
			durInterval(c.TTFTP50), durInterval(c.TTFTP99), durInterval(c.TPOTP50), durInterval(c.TPOTP99),
			numCell(c.Blocks, 0)})
	}
	_ = t.write(b, md)
	line := fmt.Sprintf("too short: too short for an interval (throughput: fewer than %d request lifetimes of window; p50: fewer than %d requests; p99: fewer than %d)", analyze.MinIntervalBlocks, analyze.MinIntervalRequests, analyze.MinP99IntervalRequests)
	if md {
		line = mdEscape(line) + "  "
	}
	b.WriteString(line + "\n\n")
}

// tooShort is what an interval cell says where the level is too short for one.
const tooShort = "too short"

func rateInterval(iv *analyze.Interval, prec int) string {
	if iv == nil {
		return tooShort
	}
	return numCell(iv.Low, prec) + "–" + numCell(iv.High, prec)
}

func durInterval(iv *analyze.Interval) string {
	if iv == nil {
		return tooShort
	}
	return durCell(&iv.Low) + "–" + durCell(&iv.High)
}

// ceilingStabilityLine is the line under the realistic ceiling: how stable it is.
func ceilingStabilityLine(r *analyze.Run) string {
	bs := r.Bootstrap
	if bs == nil || bs.Ceiling == nil {
		return ""
	}
	st := bs.Ceiling
	// What it measures: each level's requests resampled within this run. How the
	// next run moves the ceiling is not in it; repeats measure that.
	scope := " (each level's requests resampled; the run-to-run spread is not in it: record --repeat 3 measures it)"
	if r.RepeatCeiling != nil {
		scope = " (each level's requests resampled; the repeats line says how runs differ)"
	}
	if st.Stable {
		return "stability within this run: " + st.Text + scope
	}
	return "stability within this run: UNSTABLE, " + st.Text + "; read the ceiling as the range " + st.RangeText() + scope
}
