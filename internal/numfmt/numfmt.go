// Package numfmt writes numbers for people: thousands separators, the one
// implementation that analyze's text, plan's tables and the report share, and the
// cells of analyze's text output (fixed decimals, durations, concurrencies,
// percentages), which the analysis's own sentences quote.
package numfmt

import (
	"strconv"
	"strings"
)

// Thousands writes the decimal number s (an optional minus sign, digits, an optional
// fraction) with a comma between groups of three digits of its integer part:
// "-1234567.5" becomes "-1,234,567.5".
func Thousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

// Int is n with thousands separators: 351,424.
func Int(n int64) string { return Thousands(strconv.FormatInt(n, 10)) }
