package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestSearchAndAnalysisGiveOneAnswer is issue 27's "one trace, two answers": a
// search recorded with the knee off and a p95 TTFT target against a server whose
// 16 slots make the target fail above 16. analyze and report of the trace, given
// no criteria, judge it by the search's own (knee off, TTFT p95), say so, and
// headline what the search answered; the report shows the target with its
// percentile, not "no latency targets". Given other criteria, analyze says that
// the search answered otherwise and why.
func TestSearchAndAnalysisGiveOneAnswer(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 50 * time.Millisecond, TokenGap: 5 * time.Millisecond, Slots: 16})
	defer eng.Close()
	dir := t.TempDir()
	trace := filepath.Join(dir, "search.parquet")
	code, _, stderr := runCLI("record", "--url", eng.URL(), "--concurrency", "auto", "--knee", "off",
		"--slo-ttft", "p95:150ms", "--prompt-tokens", "64", "--output-tokens", "16", "--warmup", "0",
		"--requests-per-level", "60", "-o", trace)
	if code != exitOK {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	r := analyzeRunJSON(t, trace)
	s := r.Search
	if s == nil || !s.Done || s.Ceiling <= 0 {
		t.Fatalf("search %+v\n%s", s, stderr)
	}
	if c := r.Criteria; c == nil || c.From != "recording" || c.Knee != nil ||
		!strings.Contains(c.Text, "knee off") || !strings.Contains(c.Text, "TTFT p95 ≤ 150.0 ms") {
		t.Errorf("criteria %+v, want the recording's: knee off, TTFT p95 ≤ 150 ms", c)
	}
	if r.SLO.TTFT == nil || *r.SLO.TTFT != 0.15 || r.SLO.TTFTP != 95 {
		t.Errorf("SLO %+v, want the search's TTFT p95 0.15 s", r.SLO)
	}
	if r.Ceilings.Knee != nil {
		t.Errorf("a knee ceiling %g although the search ran with the knee off", *r.Ceilings.Knee)
	}
	if c := r.Ceiling.Concurrency; c == nil || math.Abs(*c-s.Ceiling) > math.Max(0.1*s.Ceiling, 1) {
		t.Errorf("analyze headlines %v (%s), the search answered %g: %q", c, r.Ceiling.Binding, s.Ceiling, r.Ceiling.Evidence)
	}

	html := filepath.Join(dir, "report.html")
	if code, _, stderr := runCLI("report", trace, "-o", html); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "no latency targets") || !strings.Contains(string(page), "TTFT p95 ≤ 150.0 ms") {
		t.Errorf("the report does not show the search's target (TTFT p95 ≤ 150.0 ms)")
	}

	// Other criteria given: the analysis says the search answered otherwise.
	o := analyzeRunJSON(t, trace, "--slo-ttft", "1ms")
	if o.Criteria == nil || o.Criteria.From != "options" {
		t.Errorf("criteria %+v, want the options'", o.Criteria)
	}
	said := false
	for _, w := range o.Warnings {
		said = said || strings.Contains(w, "the search answered")
	}
	if !said {
		t.Errorf("analyze with a 1 ms target headlines %v and does not say the search answered %g: %q", o.Ceiling.Concurrency, s.Ceiling, o.Warnings)
	}
}
