package report

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// dash is shown wherever a value is unknown (null in the analysis).
const dash = "—"

// fmtNum formats a count or rate for people: thousands separators for large values,
// about three significant digits for small ones.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dash
	}
	a := math.Abs(v)
	switch {
	case a >= 100:
		return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case a >= 10:
		return trimZeros(strconv.FormatFloat(v, 'f', 1, 64))
	case a >= 1:
		return trimZeros(strconv.FormatFloat(v, 'f', 2, 64))
	case a == 0:
		return "0"
	default:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
}

// fmtInt formats an integer with thousands separators.
func fmtInt(v int64) string { return groupThousands(strconv.FormatInt(v, 10)) }

// fmtPtr formats an optional number, dash when unknown.
func fmtPtr(v *float64) string {
	if v == nil {
		return dash
	}
	return fmtNum(*v)
}

// fmtConc formats a concurrency: whole numbers without decimals, interpolated ones
// (a ceiling between two tested levels) with one.
func fmtConc(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dash
	}
	if v == math.Trunc(v) {
		return groupThousands(strconv.FormatFloat(v, 'f', 0, 64))
	}
	return trimZeros(strconv.FormatFloat(v, 'f', 1, 64))
}

// fmtDur formats a duration in seconds with a unit that keeps about three digits.
func fmtDur(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return dash
	}
	a := math.Abs(s)
	switch {
	case a == 0:
		return "0 ms"
	case a < 0.001:
		return trimZeros(strconv.FormatFloat(s*1000, 'f', 3, 64)) + " ms"
	case a < 0.01:
		return trimZeros(strconv.FormatFloat(s*1000, 'f', 2, 64)) + " ms"
	case a < 0.1:
		return trimZeros(strconv.FormatFloat(s*1000, 'f', 1, 64)) + " ms"
	case a < 1:
		return strconv.FormatFloat(s*1000, 'f', 0, 64) + " ms"
	case a < 10:
		return trimZeros(strconv.FormatFloat(s, 'f', 2, 64)) + " s"
	case a < 100:
		return trimZeros(strconv.FormatFloat(s, 'f', 1, 64)) + " s"
	default:
		return groupThousands(strconv.FormatFloat(s, 'f', 0, 64)) + " s"
	}
}

// fmtDurPtr formats an optional duration, dash when unknown.
func fmtDurPtr(s *float64) string {
	if s == nil {
		return dash
	}
	return fmtDur(*s)
}

// fmtBytes formats a size in GiB (memory budgets are GPU-sized).
func fmtGiB(b int64) string {
	return fmtNum(float64(b)/(1<<30)) + " GiB"
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func groupThousands(s string) string { return numfmt.Thousands(s) }

// round keeps d decimals; chart data does not need float64's seventeen digits, and
// shorter numbers keep the file small.
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// roundSig keeps n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	d := n - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	return round(v, d)
}

// finite reports whether v is a plottable number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// baseName is the file name of a source path, for labels.
func baseName(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Base(strings.TrimRight(p, "/"))
}
