package importer

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDoesNotAnalyze: the importer reads other tools' files into trace rows and
// nothing more, so the analysis is not among its dependencies (issue 32); running
// the analysis on an imported run and comparing it with the tool's own summary is
// package importanalysis, above both.
func TestDoesNotAnalyze(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const mod = "github.com/ceiling-llm/ceiling/"
	for _, p := range strings.Fields(string(out)) {
		if p == mod+"analyze" || strings.HasPrefix(p, mod+"analyze/") || strings.HasPrefix(p, mod+"report") {
			t.Errorf("importer depends on %s", p)
		}
	}
}
