package importer

import (
	"testing"

	"github.com/ceiling-llm/ceiling/internal/depstest"
)

// TestDoesNotAnalyze: the importer reads other tools' files into trace rows and
// nothing more, so the analysis is not among its dependencies (issue 32); running
// the analysis on an imported run and comparing it with the tool's own summary is
// package importanalysis, above both.
func TestDoesNotAnalyze(t *testing.T) {
	for _, p := range depstest.Ours(t) {
		if depstest.Under(p, "analyze") || depstest.Under(p, "report") {
			t.Errorf("importer depends on %s", p)
		}
	}
}
