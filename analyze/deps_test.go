package analyze

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSeesTracesOnly: analyze reads traces and nothing else, so neither the
// recorder's packages nor the importers are among its dependencies (issue 22):
// importing other tools' files happens before the analysis, in importer and cmd.
func TestSeesTracesOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const mod = "github.com/ceiling-llm/ceiling/"
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, mod+"record") || strings.HasPrefix(p, mod+"importer") {
			t.Errorf("analyze depends on %s", p)
		}
	}
}
