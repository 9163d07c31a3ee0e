package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/trace"
)

// writeSyntheticTrace writes a small closed-loop sweep (concurrency 1, 2, 4; 8
// requests per level) whose server holds 2 requests at a time, so there is a ceiling.
func writeSyntheticTrace(t *testing.T, path, model string) {
	t.Helper()
	start := time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC)
	info := trace.RunInfo{Tool: "ceiling", Version: "test", RunID: "synthetic", Started: start,
		Target: trace.Target{BaseURL: "http://127.0.0.1:8000", Endpoint: "chat", Model: model},
		Plan:   trace.Plan{Mode: "closed", Concurrency: []int{1, 2, 4}, RequestsPerLevel: 8, PromptTokens: 64, OutputTokens: 16}}
	var rows []trace.Row
	t0 := start.UnixNano()
	id := int64(0)
	for lvl, c := range []int{1, 2, 4} {
		slowdown := int64(max(1, c/2)) // beyond 2 slots requests queue
		for w := 0; w < c; w++ {
			at := t0
			for k := 0; k < 8/c; k++ {
				sent := at
				first := sent + 50e6*slowdown
				gaps := make([]int32, 15)
				for g := range gaps {
					gaps[g] = int32(20000 * slowdown)
				}
				end := first + 15*20e6*slowdown
				p, o := int32(64), int32(16)
				fin := "length"
				rows = append(rows, trace.Row{RunID: "synthetic", Level: int32(lvl), Concurrency: int32(c), RequestID: id, Worker: int32(w),
					ScheduledNs: sent, SentNs: sent, FirstTokenNs: &first, FirstContentNs: &first, EndNs: end, ChunkGapsUs: gaps,
					PromptTokens: &p, OutputTokens: &o, TokensSource: "usage", TargetPromptTokens: 64, MaxTokens: 16, Status: 200, FinishReason: &fin})
				id++
				at = end + 1e6
			}
		}
		t0 += 10e9
	}
	if err := trace.WriteFile(path, info, rows); err != nil {
		t.Fatal(err)
	}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "run.parquet")
	hostileModel := `</script><img src=x onerror=alert(1)>`
	writeSyntheticTrace(t, trace, hostileModel)

	out := filepath.Join(dir, "report.html")
	code, _, stderr := runCLI("report", trace, "-o", out, "--slo-ttft", "2s")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte(`id="ceiling-analysis"`)) || !bytes.Contains(html, []byte("Per-level statistics")) {
		t.Errorf("report lacks its parts")
	}
	if bytes.Contains(html, []byte(hostileModel)) {
		t.Errorf("the model name reached the page unescaped")
	}
	// The embedded analysis is the one `ceiling analyze --format json` prints.
	m := regexp.MustCompile(`<script type="application/json" id="ceiling-analysis">([\s\S]*?)</script>`).FindSubmatch(html)
	if m == nil {
		t.Fatal("no embedded analysis")
	}
	var a analyze.Analysis
	if err := json.Unmarshal(m[1], &a); err != nil {
		t.Fatalf("embedded analysis: %v", err)
	}
	if len(a.Runs) != 1 || len(a.Runs[0].Levels) != 3 || a.Runs[0].Model != hostileModel {
		t.Errorf("embedded analysis has %d runs, want 1 with 3 levels and the model name intact", len(a.Runs))
	}

	// -o - writes the page to stdout.
	code, stdout, stderr := runCLI("report", trace, "-o", "-")
	if code != exitOK || !strings.HasPrefix(stdout, "<!DOCTYPE html>") {
		t.Errorf("-o -: exit %d, stdout starts %.40q, stderr %s", code, stdout, stderr)
	}
}

func TestReportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no run", []string{"report"}, exitUsage, "no run given"},
		{"bad flag", []string{"report", "--nope", "x.parquet"}, exitUsage, "unknown flag"},
		{"bad slo", []string{"report", "x.parquet", "--slo-ttft", "-1s"}, exitUsage, "--slo-ttft"},
		{"missing file", []string{"report", filepath.Join(dir, "missing.parquet"), "-o", filepath.Join(dir, "r.html")}, exitFailed, "missing.parquet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
	if code, stdout, _ := runCLI("report", "--help"); code != exitOK || !strings.Contains(stdout, "Example:") {
		t.Errorf("--help: exit %d, want 0 and the help with an example on stdout\n%s", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); err == nil {
		t.Errorf("a failed report left a file behind")
	}
}
