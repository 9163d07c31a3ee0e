// Package errtext groups and shortens error texts for display: the recorder's
// progress line and the analysis' error groups count failures by the same key and
// cut them the same way.
package errtext

import (
	"strings"
	"unicode"
)

// Key is s with every run of digits replaced by one '#', so that texts differing
// only in their counts ("request (256 tokens)", "request (300 tokens)") group
// together.
func Key(s string) string {
	var b strings.Builder
	digits := false
	for _, r := range s {
		if unicode.IsDigit(r) {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// Clip puts s on one line (runs of white space become one space) and keeps at most
// n characters of it, marking a cut with "…".
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
