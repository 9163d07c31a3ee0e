package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestFailedLevelKeptWithTheServersText: a level whose requests all fail stops the
// sweep; the trace is written with it, and analyze and the report show the
// server's own error text grouped, not only "http_500".
func TestFailedLevelKeptWithTheServersText(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", Fault: func(i int64) enginetest.Fault {
		if i == 0 {
			return enginetest.FaultNone // the probe request
		}
		return enginetest.FaultInternal
	}})
	defer eng.Close()
	dir := t.TempDir()
	trace := filepath.Join(dir, "run.parquet")
	code, _, stderr := runCLI("record", "--url", eng.URL(), "--concurrency", "2,4", "--requests-per-level", "100",
		"--prompt-tokens", "20", "--output-tokens", "4", "--metrics-url", "off", "-o", trace)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, exitFailed, stderr)
	}
	for _, w := range []string{"wrote " + trace + ": 1 levels", "level 0 (c=2)", "requests all failed, the first with: HTTP 500", "internal server error (injected)"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	text := ceiling(t, "analyze", trace)
	if !strings.Contains(text, "internal server error (injected)") {
		t.Errorf("analyze does not show the server's text:\n%s", text)
	}
	js := ceiling(t, "analyze", trace, "--format", "json")
	if !strings.Contains(js, `"error_groups"`) || !strings.Contains(js, "internal server error (injected)") {
		t.Errorf("analyze --format json has no error group with the server's text")
	}
	html := filepath.Join(dir, "r.html")
	ceiling(t, "report", trace, "-o", html)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "internal server error (injected)") {
		t.Error("the report does not show the server's error text")
	}
}
