package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/trace"
)

// writeAnalyzeFixture writes a small closed-loop trace: 2 workers, 6 requests.
func writeAnalyzeFixture(t *testing.T) string {
	t.Helper()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var rows []trace.Row
	for i := range 6 {
		sent := base + int64(i/2)*200e6 + int64(i%2)*10e6
		first := sent + 50e6
		out := int32(4)
		rows = append(rows, trace.Row{
			RunID: "cli", Level: 0, Concurrency: 2, RequestID: int64(i), Worker: int32(i % 2),
			ScheduledNs: sent, SentNs: sent, FirstTokenNs: &first, FirstContentNs: &first,
			EndNs: first + 30e6, ChunkGapsUs: []int32{10000, 10000, 10000}, OutputTokens: &out,
			TokensSource: "usage", Status: 200,
		})
	}
	path := filepath.Join(t.TempDir(), "run.parquet")
	info := trace.RunInfo{RunID: "cli", Target: trace.Target{Model: "m"}, Server: trace.ServerInfo{Kind: "vllm"}}
	if err := trace.WriteFile(path, info, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAnalyzeCommand(t *testing.T) {
	trace := writeAnalyzeFixture(t)

	code, out, errOut := runCLI("analyze", trace)
	if code != exitOK || !strings.Contains(out, "Run cli") || !strings.Contains(out, "TTFT p50") {
		t.Errorf("text: exit %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runCLI("analyze", trace, "--format", "json", "--slo-ttft", "100ms", "--slo-tpot", "20ms")
	var a analyze.Analysis
	if code != exitOK || json.Unmarshal([]byte(out), &a) != nil || len(a.Runs) != 1 {
		t.Fatalf("json: exit %d\n%s\n%s", code, out, errOut)
	}
	if s := a.Runs[0].SLO; s.TTFT == nil || *s.TTFT != 0.1 || s.TPOT == nil || *s.TPOT != 0.02 || s.E2E != nil {
		t.Errorf("SLO = %+v, want ttft 0.1 tpot 0.02", s)
	}
	if a.Runs[0].Levels[0].Requests != 6 || a.Runs[0].Levels[0].GoodputRequestS == nil {
		t.Errorf("level = %+v", a.Runs[0].Levels[0])
	}

	outFile := filepath.Join(t.TempDir(), "analysis.md")
	if code, _, errOut := runCLI("analyze", trace, "--format", "markdown", "-o", outFile); code != exitOK {
		t.Fatalf("-o: exit %d: %s", code, errOut)
	}
	if md, err := os.ReadFile(outFile); err != nil || !strings.Contains(string(md), "| level |") {
		t.Errorf("markdown file: %v\n%s", err, md)
	}
}

func TestAnalyzeCommandErrors(t *testing.T) {
	trace := writeAnalyzeFixture(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"analyze"}, exitUsage, "no run given"},
		{[]string{"analyze", trace, "--format", "yaml"}, exitUsage, "--format"},
		{[]string{"analyze", trace, "--gpu-util", "1.5"}, exitUsage, "--gpu-util"},
		{[]string{"analyze", trace, "--slo-ttft", "-1s"}, exitUsage, "--slo-ttft"},
		{[]string{"analyze", trace, "--kv-dtype", "int3"}, exitUsage, "--kv-dtype"},
		{[]string{"analyze", trace, "--tp", "8", "--gpus", "4"}, exitUsage, "--tp"},
		{[]string{"analyze", trace, "--no-such-flag"}, exitUsage, "unknown flag"},
		{[]string{"analyze", filepath.Join(t.TempDir(), "missing.parquet")}, exitFailed, "missing.parquet"},
	} {
		code, _, errOut := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	code, out, _ := runCLI("analyze", "--help")
	if code != exitOK || !strings.Contains(out, "Example:") {
		t.Errorf("--help: exit %d, want 0 and the help with an example on stdout\n%s", code, out)
	}
}
