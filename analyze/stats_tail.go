package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
	"github.com/ceiling-llm/ceiling/searchrule"
)

// Tail percentiles with a sample-size guard: the p-th percentile says something
// about the 1 − p/100 slowest share only when at least one value lies in that
// share, so it needs n ≥ 1/(1 − p/100) values (p99.9: 1,000; p99: 100; p95: 20).
// Below that the value would be the maximum, or an interpolation towards it, dressed
// up as a tail figure: it is given as null with a note instead, never as a number.

// defaultTail is the tail percentile every level reports.
const defaultTail = 99.9

// tailPercentiles is p99.9 and the asked percentiles, sorted, without duplicates or
// the ones every Summary carries already.
func tailPercentiles(asked []float64) []float64 {
	out := []float64{defaultTail}
	for _, p := range asked {
		if p > 0 && p < 100 && !slices.Contains(summaryPercentiles[:], p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// TailNeed is the number of values the p-th percentile needs (searchrule's rule,
// which the search sizes its levels by).
func TailNeed(p float64) int { return searchrule.TailNeed(p) }

// PercentileName is how a percentile is written: p99.9, p95, p97.5.
func PercentileName(p float64) string { return searchrule.PercentileName(p) }

// tailOf builds the tail percentiles from n sorted values given by at(k) (seconds).
func tailOf(n int, at func(int) float64, ps []float64, what string) []TailPercentile {
	var out []TailPercentile
	for _, p := range ps {
		t := TailPercentile{P: p, N: n, Need: TailNeed(p)}
		if n >= t.Need && n > 0 {
			h := float64(n-1) * p / 100
			lo := int(math.Floor(h))
			v := at(n - 1)
			if lo < n-1 {
				v = at(lo) + (h-float64(lo))*(at(lo+1)-at(lo))
			}
			t.Value = ptr(v)
		} else {
			t.Note = fmt.Sprintf("%s needs ≥ %s %s; this level has %s", PercentileName(p), numfmt.Int(int64(t.Need)), what, numfmt.Int(int64(n)))
		}
		out = append(out, t)
	}
	return out
}

// tailNs is tailOf for sorted nanoseconds.
func tailNs(sorted []int64, ps []float64, what string) []TailPercentile {
	return tailOf(len(sorted), func(k int) float64 { return float64(sorted[k]) / 1e9 }, ps, what)
}

// tailFloat is tailOf for sorted seconds.
func tailFloat(sorted []float64, ps []float64, what string) []TailPercentile {
	return tailOf(len(sorted), func(k int) float64 { return sorted[k] }, ps, what)
}

// tail is tailOf for the pooled gaps: the order statistics needed are read in one
// pass over the counts.
func (h *gapHist) tail(ps []float64) []TailPercentile {
	n := int(h.n)
	ranks := map[int64]int64{}
	for _, p := range ps {
		if n == 0 || n < TailNeed(p) {
			continue
		}
		x := float64(n-1) * p / 100
		lo := int64(math.Floor(x))
		ranks[lo], ranks[min(lo+1, h.n-1)] = 0, 0
	}
	if len(ranks) > 0 {
		want := make([]int64, 0, len(ranks))
		for r := range ranks {
			want = append(want, r)
		}
		slices.Sort(want)
		next := 0
		var seen int64
		h.each(func(v, c int64) {
			for next < len(want) && want[next] < seen+c {
				ranks[want[next]] = v
				next++
			}
			seen += c
		})
	}
	return tailOf(n, func(k int) float64 { return float64(ranks[int64(k)]) / 1e6 }, ps, "gaps")
}

// TailValue returns the p-th percentile of s and, when it cannot be told, why: the
// four percentiles every Summary carries, then its Tail.
func (s Summary) TailValue(p float64) (*float64, string) {
	for i, q := range summaryPercentiles {
		if q == p {
			v := [...]*float64{s.P50, s.P90, s.P95, s.P99}[i]
			if v == nil {
				return nil, fmt.Sprintf("%s: no value measured", PercentileName(p))
			}
			return v, ""
		}
	}
	for _, t := range s.Tail {
		if t.P == p {
			return t.Value, t.Note
		}
	}
	return nil, fmt.Sprintf("%s was not computed", PercentileName(p))
}

// tailCell is a tail percentile's table cell: the value, or "n < need" when the
// level has too few values to tell it.
func tailCell(s Summary, p float64) string {
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
func tailTable(r *Run) *table {
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
		n := PercentileName(p)
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
func writeTail(b *strings.Builder, r *Run, md bool, line func(string, ...any)) {
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
