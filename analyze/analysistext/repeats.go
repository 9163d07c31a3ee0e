package analysistext

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The repeats: the spread between each point's repeats, and whether they agree on
// the ceiling.

// writeRepeats writes the spread between each point's repeats, and the ceiling's
// agreement across them.
func writeRepeats(b *strings.Builder, r *analyze.Run, md bool) {
	if len(r.Repeats) == 0 {
		return
	}
	heading(b, md, 2, "Repeats (ceilings and fits use each point's mean)")
	t := &table{head: []string{"point", "levels", "out tok/s min–max", "TTFT p99 min–max"}}
	for _, s := range r.Repeats {
		pt := fmt.Sprintf("c=%d", s.Concurrency)
		if s.Rate > 0 {
			pt = fmt.Sprintf("rate=%g/s", s.Rate)
		}
		ls := make([]string, len(s.Levels))
		for i, l := range s.Levels {
			ls[i] = fmt.Sprint(l)
		}
		ttft := "—"
		if s.TTFTP99Min != nil {
			ttft = durCell(s.TTFTP99Min) + "–" + durCell(s.TTFTP99Max)
		}
		t.rows = append(t.rows, []string{pt, strings.Join(ls, ","),
			numCell(s.OutputTokSMin, 1) + "–" + numCell(s.OutputTokSMax, 1), ttft})
	}
	_ = t.write(b, md)
	b.WriteString("\n")
}

// repeatCeilingLine is the line under the realistic ceiling: whether the repeats
// agree on it.
func repeatCeilingLine(r *analyze.Run) string {
	st := r.RepeatCeiling
	if st == nil {
		return ""
	}
	if st.Stable {
		return "across repeats: " + st.Text
	}
	return "across repeats: MOVES, " + st.Text + "; read the ceiling as the range " + st.RangeText()
}
