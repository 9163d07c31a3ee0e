package report

import (
	"strings"
	"testing"
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
