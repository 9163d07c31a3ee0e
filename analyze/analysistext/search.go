package analysistext

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The ceiling search section: the answer, the criteria and the path, as the
// recorder judged each level (analyze.SearchPath).

// searchTable is the search path as a table.
func searchTable(p *analyze.SearchPath) *table {
	x := "concurrency"
	if p.Unit == "requests/s" {
		x = "rate"
	}
	t := &table{head: []string{"level", x, "why", "verdict", "failing criterion", "bracket after"}}
	for _, s := range p.Steps {
		failing := strings.Join(s.Failed, ", ")
		verdict := s.Verdict
		switch s.Verdict {
		case "unjudged":
			verdict, failing = "unjudged: "+analyze.UnjudgedReason(s), "—"
		case "invalid":
			failing = "—"
		}
		t.rows = append(t.rows, []string{fmt.Sprint(s.Level), trimFloat(s.X), s.Phase, verdict, failing, bracketText(s.Lo, s.Hi)})
	}
	return t
}

// bracketText is "8..12", "8..?" (no failing level yet) or "?..4" (none passed).
func bracketText(lo, hi float64) string {
	l, h := "?", "?"
	if lo > 0 {
		l = trimFloat(lo)
	}
	if hi > 0 {
		h = trimFloat(hi)
	}
	return l + ".." + h
}

// writeSearch writes the search section: the answer, the criteria, the path.
func writeSearch(b *strings.Builder, r *analyze.Run, md bool, line func(string, ...any)) {
	p := r.Search
	if p == nil {
		return
	}
	heading(b, md, 2, "Ceiling search")
	line("%s", p.Answer)
	if p.Sustain != "" {
		line("%s", p.Sustain)
	}
	line("criteria: %s; resolution %s; GPU time %s (sum of the search's level durations)",
		strings.Join(p.Criteria, "; "), p.Resolution, durText(p.LevelS))
	b.WriteString("\n")
	_ = searchTable(p).write(b, md)
	b.WriteString("\n")
	for _, s := range p.Steps {
		for _, e := range s.Evidence {
			if md {
				b.WriteString("- " + mdEscape(fmt.Sprintf("level %d (%s): %s", s.Level, trimFloat(s.X), e)) + "\n")
			} else {
				b.WriteString("  - " + textSafe(fmt.Sprintf("level %d (%s): %s", s.Level, trimFloat(s.X), e)) + "\n")
			}
		}
	}
	b.WriteString("\n")
}

func durText(s float64) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 60:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.1f s", s)
}
