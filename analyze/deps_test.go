package analyze

import (
	"testing"

	"github.com/ceiling-llm/ceiling/internal/depstest"
)

// TestSeesTracesOnly: analyze reads traces and nothing else, so neither the
// recorder's packages nor the importers are among its dependencies (issue 22):
// importing other tools' files happens before the analysis, in importer and cmd.
func TestSeesTracesOnly(t *testing.T) {
	for _, p := range depstest.Ours(t) {
		if depstest.Under(p, "record") || depstest.Under(p, "importer") {
			t.Errorf("analyze depends on %s", p)
		}
	}
}
