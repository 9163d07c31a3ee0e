package analyze

import (
	"strings"

	"github.com/ceiling-llm/ceiling/trace"
)

// The ceiling search of a recording (record --concurrency auto, --rate auto), as the
// recorder judged it: every level with why it ran, its verdict, the criterion that
// failed and the bracket after it, and the answer in the same sentence the live
// output printed. The analysis does not re-judge the levels: the recorder judged
// them on this package's own figures for the sealed levels.

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

// UnjudgedReason says why the search left a level unjudged: the step's own
// evidence where the search stored it, else why a level passes every criterion
// and is still not judged (the knee had no lower level to compare it with).
func UnjudgedReason(s SearchStep) string {
	if len(s.Evidence) > 0 {
		return strings.Join(s.Evidence, "; ")
	}
	return "it met every criterion, but no lower level ran to judge the knee against"
}
