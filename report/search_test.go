package report

import (
	"html"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// TestSearchSection: a run recorded by a search shows its answer, the path chart
// and every step with its verdict and failing criterion; a run without one shows
// no search section.
func TestSearchSection(t *testing.T) {
	a := fixture(4, 20)
	answer := "ceiling 2 concurrent requests (bracket 2..3), bound by ttft p95 at 3: ttft p95 2.31s > 2s (40 requests)"
	r := &a.Runs[0]
	r.Search = &analyze.SearchPath{Answer: answer, Done: true, Ceiling: 2, Lo: 2, Hi: 3, Bound: "ttft p95",
		Criteria: []string{"ttft p95 <= 2s", "errors <= 5%"}, Resolution: "10%,1", Unit: "concurrent requests", LevelS: 321}
	for i, l := range r.Levels {
		st := analyze.SearchStep{Level: l.Level, X: float64(l.Concurrency), Phase: "ramp", Verdict: "pass", Lo: float64(l.Concurrency)}
		if i == len(r.Levels)-1 {
			st.Verdict, st.Failed, st.Evidence = "fail", []string{"ttft p95"}, []string{"ttft p95 2.31s > 2s (40 requests)"}
		}
		r.Search.Steps = append(r.Search.Steps, st)
	}
	page := render(t, a, Options{})
	for _, want := range []string{"Ceiling search", html.EscapeString(answer), "Search path", "ttft p95 2.31s &gt; 2s", "GPU time to the verdict 321 s"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if plain := render(t, fixture(4, 20), Options{}); strings.Contains(plain, "Ceiling search") {
		t.Errorf("a run without a search shows a search section")
	}
}
