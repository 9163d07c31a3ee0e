package record

import (
	"testing"

	"github.com/ceiling-llm/ceiling/internal/depstest"
)

// TestDoesNotAnalyze: the recorder records; the search judges its levels through
// package searchrule on figures an Options.Analyzer computes, so the analysis is
// not among its dependencies (issue 32).
func TestDoesNotAnalyze(t *testing.T) {
	for _, p := range depstest.Ours(t) {
		if depstest.Under(p, "analyze") || depstest.Under(p, "report") {
			t.Errorf("record depends on %s", p)
		}
	}
}
