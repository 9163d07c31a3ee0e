// Package depstest lists a package's dependencies inside this module, for the
// tests that keep the layers apart (the recorder and the importer see no
// analysis, the analysis sees no recorder, engine sits below everything).
package depstest

import (
	"os/exec"
	"strings"
	"testing"
)

// Module is this module's import path, with the trailing slash.
const Module = "github.com/ceiling-llm/ceiling/"

// Ours is what the package in the test's directory depends on inside this
// module (itself included), as paths relative to the module: "analyze",
// "internal/numfmt". It fails the test when go list cannot say.
func Ours(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var ours []string
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(p, Module); ok {
			ours = append(ours, rel)
		}
	}
	if len(ours) == 0 {
		t.Fatalf("go list -deps named nothing of %s:\n%s", Module, out)
	}
	return ours
}

// Under says whether pkg is root or a package below it ("analyze" holds
// "analyze/analysistext", not "analyzer").
func Under(pkg, root string) bool {
	return pkg == root || strings.HasPrefix(pkg, root+"/")
}
