package report

import (
	"html"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// TestSweepSpanIsTheRange: the sweep card and the run summary show the lowest and
// highest level run, not the first and last in search order (a search that ran
// 8, 4, 6, 7 showed "8–7").
func TestSweepSpanIsTheRange(t *testing.T) {
	a := fixture(4, 20) // concurrency 1, 2, 4, 8
	r := &a.Runs[0]
	for i, c := range []int{8, 4, 6, 7} {
		r.Levels[i].Concurrency = c
	}
	page := render(t, a, Options{})
	if strings.Contains(page, "8–7") {
		t.Errorf("the page shows the search order 8–7 as the sweep range")
	}
	if got := strings.Count(page, "4–8"); got < 1 {
		t.Errorf("the page never shows the range 4–8")
	}
}

// TestNoPeakCard: a USL fit without a peak within reach shows "no peak within the
// model's reach" on its card, not an Nmax (issue 27: "125,706,928").
func TestNoPeakCard(t *testing.T) {
	a := fixture(4, 20)
	f := a.Runs[0].Fit.USL
	f.Kappa, f.NMax = 6.2e-17, nil
	f.NoPeak = "no peak within the model's reach (κ ≈ 0: the fit's peak lies beyond 10× the highest level tested, 8)"
	page := render(t, a, Options{})
	if !strings.Contains(page, "no peak within the model&#39;s reach") && !strings.Contains(page, "no peak within the model's reach") {
		t.Errorf("the fit card does not say there is no peak within reach")
	}
	if strings.Contains(page, "Nmax") {
		t.Errorf("the page shows an Nmax for a fit without a peak")
	}
}

// TestSearchUnjudgedReason: the search section gives an unjudged level's reason
// beside the verdict, not "unjudged" alone.
func TestSearchUnjudgedReason(t *testing.T) {
	a := fixture(2, 20)
	r := &a.Runs[0]
	r.Search = &analyze.SearchPath{Answer: "ceiling 2", Done: true, Ceiling: 2, Lo: 2, Unit: "concurrent requests", Steps: []analyze.SearchStep{
		{Level: 0, X: 2, Phase: "start", Verdict: "unjudged", Lo: 2},
		{Level: 1, X: 1, Phase: "down", Verdict: "pass", Lo: 2},
	}}
	page := html.UnescapeString(render(t, a, Options{}))
	if !strings.Contains(page, "unjudged") {
		t.Fatalf("no unjudged step on the page")
	}
	if !strings.Contains(page, "unjudged: it met every criterion, but no lower level ran to judge the knee against") {
		t.Errorf("the unjudged step has no reason on the page")
	}
}
