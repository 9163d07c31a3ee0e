package analysistext

import (
	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// The cells of the tables: package numfmt writes the numbers, as it does in the
// analysis's own sentences, so that a sentence quotes a figure as its table shows
// it. An unknown value is "—".

func offeredLabel(l analyze.Level) string { return analyze.OfferedLabel(l) }

func numCell(v float64, prec int) string { return numfmt.Fixed(v, prec) }

func optCell(v *float64, prec int) string { return numfmt.FixedOrNone(v, prec) }

// concCell prints a concurrency: whole numbers (the batch, knee and SLO ceilings, a
// level) without decimals, an interpolated one (the KV ceiling) with one.
func concCell(v *float64) string { return numfmt.Concurrency(v) }

// durCell prints seconds with a unit that keeps three significant digits.
func durCell(s *float64) string { return numfmt.Seconds(s) }

func trimFloat(v float64) string { return numfmt.Short(v) }

// pct is a fraction as a whole percentage.
func pct(v *float64) string { return numfmt.Percent(v) }

// groupDigits writes n with thousands separators: 351,424.
func groupDigits(n int64) string { return numfmt.Int(n) }

// pf points at a copy of v.
func pf(v float64) *float64 { return &v }
