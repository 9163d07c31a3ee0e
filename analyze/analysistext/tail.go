package analysistext

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// The tail latencies: the percentiles beyond p99 that were asked for (a value only
// where the level has enough requests to tell it) and, in open loop, the latencies
// from the scheduled send.

// tailCell is a tail percentile's table cell: the value, or "n < need" when the
// level has too few values to tell it.
func tailCell(s analyze.Summary, p float64) string {
	for _, t := range s.Tail {
		if t.P != p {
			continue
		}
		if t.Value == nil {
			return fmt.Sprintf("n=%s < %s", numfmt.Int(int64(t.N)), numfmt.Int(int64(t.Need)))
		}
		return durCell(t.Value)
	}
	return "-"
}

// tailTable is the tail percentiles of every level (p99.9 and the ones asked), and
// in open loop the latencies from the scheduled send beside those from the actual
// one; nil when there is nothing to show.
func tailTable(r *analyze.Run) *table {
	var ps []float64
	open := false
	for _, l := range r.Levels {
		for _, t := range l.TTFT.Tail {
			if !slices.Contains(ps, t.P) {
				ps = append(ps, t.P)
			}
		}
		open = open || l.TTFTFromScheduled != nil
	}
	slices.Sort(ps)
	if len(ps) == 0 && !open {
		return nil
	}
	t := &table{head: []string{"level", "offered"}}
	for _, p := range ps {
		n := analyze.PercentileName(p)
		t.head = append(t.head, "TTFT "+n, "ITL "+n, "E2E "+n)
	}
	if open {
		t.head = append(t.head, "TTFT p99 sent", "TTFT p99 sched", "E2E p99 sent", "E2E p99 sched")
	}
	for _, l := range r.Levels {
		row := []string{fmt.Sprint(l.Level), offeredLabel(l)}
		for _, p := range ps {
			row = append(row, tailCell(l.TTFT, p), tailCell(l.ITL, p), tailCell(l.E2E, p))
		}
		if open {
			ts, es := "-", "-"
			if l.TTFTFromScheduled != nil {
				ts = durCell(l.TTFTFromScheduled.P99)
			}
			if l.E2EFromScheduled != nil {
				es = durCell(l.E2EFromScheduled.P99)
			}
			row = append(row, durCell(l.TTFT.P99), ts, durCell(l.E2E.P99), es)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// writeTail writes the tail table with its reading.
func writeTail(b *strings.Builder, r *analyze.Run, md bool, line func(string, ...any)) {
	t := tailTable(r)
	if t == nil {
		return
	}
	heading(b, md, 2, "Tail latencies")
	_ = t.write(b, md)
	b.WriteString("\n")
	line("A percentile pN needs at least 1/(1 − N/100) values (p99.9: 1,000): with fewer it is shown as n=… < …, never as a number.")
	for _, l := range r.Levels {
		if l.TTFTFromScheduled != nil {
			line("Open loop: \"sched\" is measured from each request's scheduled send (scheduled_ns), corrected for coordinated omission; \"sent\" from its actual send.")
			break
		}
	}
	b.WriteString("\n")
}
