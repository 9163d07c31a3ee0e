package record

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDoesNotAnalyze: the recorder records; the search judges its levels through
// package searchrule on figures an Options.Analyzer computes, so the analysis is
// not among its dependencies (issue 32).
func TestDoesNotAnalyze(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const mod = "github.com/ceiling-llm/ceiling/"
	for _, p := range strings.Fields(string(out)) {
		if p == mod+"analyze" || strings.HasPrefix(p, mod+"analyze/") || strings.HasPrefix(p, mod+"report") {
			t.Errorf("record depends on %s", p)
		}
	}
}
