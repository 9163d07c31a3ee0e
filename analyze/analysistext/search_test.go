package analysistext

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// TestSearchTableUnjudgedReason: an unjudged level shows why beside its verdict
// (issue 27: "unjudged" alone), from the step's evidence where the search stored
// some, else the knee's missing lower level.
func TestSearchTableUnjudgedReason(t *testing.T) {
	p := &analyze.SearchPath{Unit: "concurrent requests", Steps: []analyze.SearchStep{
		{Level: 0, X: 8, Phase: "start", Verdict: "unjudged", Lo: 8},
		{Level: 1, X: 4, Phase: "down", Verdict: "unjudged", Evidence: []string{"the level below was invalid"}, Lo: 8},
		{Level: 2, X: 16, Phase: "ramp", Verdict: "fail", Failed: []string{"errors"}, Lo: 8, Hi: 16},
	}}
	var b strings.Builder
	if err := searchTable(p).write(&b, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"unjudged: it met every criterion, but no lower level ran to judge the knee against", "unjudged: the level below was invalid"} {
		if !strings.Contains(out, want) {
			t.Errorf("the search table lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "unjudged") && !strings.Contains(line, "unjudged: ") {
			t.Errorf("an unjudged level without its reason: %q", line)
		}
	}
}
