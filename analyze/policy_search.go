package analyze

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/trace"
)

// The ceiling search of a recording (record --concurrency auto, --rate auto), as the
// recorder judged it: every level with why it ran, its verdict, the criterion that
// failed and the bracket after it, and the answer in the same sentence the live
// output printed. The analysis does not re-judge the levels: the recorder judged
// them on this package's own figures for the sealed levels.

// SearchPath is a run's ceiling search; nil for a run with a fixed list of levels.
type SearchPath struct {
	// Answer is "ceiling N concurrent requests (bracket N..M), bound by
	// <criterion> at M: <evidence>", or says how far an unfinished search got.
	Answer     string       `json:"answer"`
	Done       bool         `json:"done"`
	Ceiling    float64      `json:"ceiling"`
	Lo         float64      `json:"lo"`
	Hi         float64      `json:"hi"`
	Bound      string       `json:"bound"`
	Evidence   string       `json:"evidence,omitempty"`
	Sustain    string       `json:"sustain,omitempty"`
	Criteria   []string     `json:"criteria"`
	Resolution string       `json:"resolution"`
	Unit       string       `json:"unit"` // "concurrent requests" or "requests/s"
	LevelS     float64      `json:"level_seconds"`
	Steps      []SearchStep `json:"steps"`
}

// SearchStep is one level of the search.
type SearchStep struct {
	Level    int      `json:"level"`
	X        float64  `json:"x"` // the concurrency, or the rate
	Phase    string   `json:"phase"`
	Verdict  string   `json:"verdict"`
	Failed   []string `json:"failed,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Lo       float64  `json:"lo"`
	Hi       float64  `json:"hi"`
}

// searchPath reads the search from the run's metadata (nil without one).
func searchPath(info trace.RunInfo, levels []levelMeta) *SearchPath {
	if info.Plan.Search == nil && info.Search == nil {
		return nil
	}
	p := &SearchPath{Unit: "concurrent requests", Criteria: []string{}, Steps: []SearchStep{}}
	if info.Plan.Mode == "open" {
		p.Unit = "requests/s"
	}
	if s := info.Plan.Search; s != nil {
		p.Criteria, p.Resolution = s.Criteria, s.Resolution
	}
	if s := info.Search; s != nil {
		p.Answer, p.Done, p.Ceiling, p.Lo, p.Hi = s.Answer, s.Done, s.Ceiling, s.Lo, s.Hi
		p.Bound, p.Evidence, p.Sustain, p.LevelS = s.Bound, s.Evidence, s.Sustain, s.LevelSeconds
	} else {
		p.Answer = "search not finished: no level judged yet"
	}
	for _, l := range levels {
		s := l.Search
		if s == nil {
			continue
		}
		x := float64(l.Concurrency)
		if info.Plan.Mode == "open" {
			x = l.Rate
		}
		p.Steps = append(p.Steps, SearchStep{Level: l.Level, X: x, Phase: s.Phase, Verdict: s.Verdict,
			Failed: s.Failed, Evidence: s.Evidence, Lo: s.Lo, Hi: s.Hi})
	}
	return p
}

// searchTable is the search path as a table.
func searchTable(p *SearchPath) *table {
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
			verdict, failing = "unjudged: "+UnjudgedReason(s), "—"
		case "invalid":
			failing = "—"
		}
		t.rows = append(t.rows, []string{fmt.Sprint(s.Level), trimFloat(s.X), s.Phase, verdict, failing, bracketText(s.Lo, s.Hi)})
	}
	return t
}

// UnjudgedReason says why the search left a level unjudged: the step's own
// evidence where the search stored it, else why a level passes every criterion
// and is still not judged (the knee had no lower level to compare it with).
func UnjudgedReason(s SearchStep) string {
	if len(s.Evidence) > 0 {
		return strings.Join(s.Evidence, "; ")
	}
	return "it met every criterion, but no lower level ran to judge the knee against"
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
func writeSearch(b *strings.Builder, r *Run, md bool, line func(string, ...any)) {
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
