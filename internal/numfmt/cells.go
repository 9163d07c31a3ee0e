package numfmt

import (
	"fmt"
	"math"
)

// The numbers of analyze's text output and of the sentences the analysis writes
// into its own data (warnings, evidence): one implementation, so that a figure
// reads the same in a table and in the sentence that quotes it. An unknown value
// is "—".

// Fixed is v with prec decimals; "—" for NaN or an infinity.
func Fixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// FixedOrNone is Fixed(*v, prec); "—" for nil.
func FixedOrNone(v *float64, prec int) string {
	if v == nil {
		return "—"
	}
	return Fixed(*v, prec)
}

// Concurrency prints a concurrency: whole numbers (the batch, knee and SLO
// ceilings, a level) without decimals, an interpolated one (the KV ceiling) with
// one; "—" for nil.
func Concurrency(v *float64) string {
	if v != nil && *v == math.Trunc(*v) {
		return Fixed(*v, 0)
	}
	return FixedOrNone(v, 1)
}

// Seconds prints seconds with a unit that keeps three significant digits: 0,
// 850µs, 12.3ms, 1.50s; "—" for nil or NaN.
func Seconds(s *float64) string {
	if s == nil || math.IsNaN(*s) {
		return "—"
	}
	v := *s
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 1e-3:
		return Short(v*1e6) + "µs"
	case a < 1:
		return Short(v*1e3) + "ms"
	}
	return Short(v) + "s"
}

// Short is v with about three significant digits: no decimals from 100, one from
// 10, two below.
func Short(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Percent prints the fraction *v as a whole percentage (0.25 is "25%"); "—" for
// nil.
func Percent(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}
