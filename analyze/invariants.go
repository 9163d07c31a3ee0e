package analyze

import (
	"fmt"
	"math"
	"sort"
)

// Row invariants: a row that no request can have produced (a flipped bit in a
// trace without checksums, a broken importer, a hand-edited file) is excluded from
// the statistics and counted, with the first reason, in a warning naming its
// level; a level all of whose rows are impossible is refused. The window pass
// checks what its columns hold, the statistics pass the rest.

// gapSlackNs is how far the chunk gaps may sum past the time from the first token
// to the end: the gaps are whole µs, rounded per chunk.
const gapSlackNs = 1_000_000

// impossibleWindowRow names the first invariant row i breaks among the window
// pass's columns ("" = none): time runs forward, a closed-loop level has a
// concurrency of at least 1, a rate is a finite positive number or 0, and every row
// of a level has the concurrency and rate of its first possible row (w).
func impossibleWindowRow(c *batchCols, i int, w *windowAcc) string {
	sent, end := c.sent.Value(i), c.end.Value(i)
	conc, rate := c.concurrency.Value(i), c.rate.Value(i)
	switch {
	case end < sent:
		return fmt.Sprintf("end %d ns before the send %d ns", end, sent)
	case math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0:
		return fmt.Sprintf("rate %g", rate)
	case rate == 0 && conc <= 0:
		return fmt.Sprintf("concurrency %d of a closed-loop level", conc)
	case w != nil && (conc != w.concurrency || rate != w.rate):
		return fmt.Sprintf("concurrency %d, rate %g in a level of concurrency %d, rate %g", conc, rate, w.concurrency, w.rate)
	}
	return ""
}

// impossibleStatsRow names the first invariant row i breaks among the statistics
// pass's own columns: the first token and first content after the send and not
// after the end, token counts not negative, chunk gaps not negative and summing to
// no more than the time from the first token to the end.
func impossibleStatsRow(c *batchCols, i int) string {
	sent, end := c.sent.Value(i), c.end.Value(i)
	if c.firstTok.IsValid(i) {
		ft := c.firstTok.Value(i)
		if ft < sent || ft > end {
			return fmt.Sprintf("first token at %d ns, outside the request's %d..%d ns", ft, sent, end)
		}
		if c.gaps.IsValid(i) {
			s, e := c.gaps.ValueOffsets(i)
			var sum int64
			for _, g := range c.gapValues[s:e] {
				if g < 0 {
					return fmt.Sprintf("chunk gap of %d µs", g)
				}
				sum += int64(g)
			}
			if sum*1000 > end-ft+gapSlackNs+(e-s)*1000 {
				return fmt.Sprintf("chunk gaps summing to %.3f s, past the %.3f s from the first token to the end", float64(sum)/1e6, float64(end-ft)/1e9)
			}
		}
	}
	if c.firstCon.IsValid(i) && (c.firstCon.Value(i) < sent || c.firstCon.Value(i) > end) {
		return fmt.Sprintf("first content at %d ns, outside the request's %d..%d ns", c.firstCon.Value(i), sent, end)
	}
	for _, t := range []struct {
		name string
		ok   bool
		v    int32
	}{{"output tokens", c.outputTokens.IsValid(i), c.outputTokens.Value(i)}, {"prompt tokens", c.promptTokens.IsValid(i), c.promptTokens.Value(i)}} {
		if t.ok && t.v < 0 {
			return fmt.Sprintf("%s %d", t.name, t.v)
		}
	}
	// Lengths against what was asked: a server that honours max_tokens sends no
	// more (a few special tokens aside: the recorder's own rule, farAboveAsked),
	// and no request asks for more than maxRowTokens. 2^31-1 output tokens under
	// max_tokens 20 made 96 billion tok/s of a valid level.
	if c.outputTokens.IsValid(i) {
		out, asked := c.outputTokens.Value(i), c.maxTokens.Value(i)
		switch {
		case asked > 0 && int64(out) > farAboveAsked(asked):
			return fmt.Sprintf("output tokens %d far above the max_tokens %d asked", out, asked)
		case out > maxRowTokens:
			return fmt.Sprintf("output tokens %d above %d", out, maxRowTokens)
		}
	}
	if c.promptTokens.IsValid(i) && c.promptTokens.Value(i) > maxRowTokens {
		return fmt.Sprintf("prompt tokens %d above %d", c.promptTokens.Value(i), maxRowTokens)
	}
	return ""
}

// maxRowTokens bounds a request's prompt or output tokens: 2^28 (268 million) is
// far beyond any model's context.
const maxRowTokens = 1 << 28

// farAboveAsked is the output count beyond which a row's count cannot be what a
// request for asked tokens got: twice the limit, and at least 64 over it, as the
// recorder refuses a usage report (record/row.go farAbove).
func farAboveAsked(asked int32) int64 {
	return max(2*int64(asked), int64(asked)+64)
}

// exclusions counts the rows excluded per level, with the first reason.
type exclusions map[levelKey]*exclusion

type exclusion struct {
	n     int
	first string
}

func (x exclusions) add(k levelKey, why string) {
	e := x[k]
	if e == nil {
		e = &exclusion{first: why}
		x[k] = e
	}
	e.n++
}

// warnings are the run's exclusion warnings, in level order.
func (x exclusions) warnings(run string) []string {
	var keys []levelKey
	for k := range x {
		if k.run == run {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a].level < keys[b].level })
	var out []string
	for _, k := range keys {
		e := x[k]
		out = append(out, fmt.Sprintf("level %d: %d rows excluded for impossible values (the first: %s)", k.level, e.n, e.first))
	}
	return out
}
