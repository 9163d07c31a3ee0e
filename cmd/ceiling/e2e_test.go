package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/browsertest"
	"github.com/ceiling-llm/ceiling/internal/realserver"
)

// TestEndToEndRealServer is the whole pipeline on real parts: a real llama.cpp server
// (4 slots) swept by `ceiling record`, analyzed, reported, the report opened in
// headless Chromium, and the trace read back by DuckDB, which must agree with the
// analysis on request counts, output-token sums and TTFT p50/p99 per level.
func TestEndToEndRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	srv := realserver.Start(t, realserver.Options{Slots: 4, Context: 8192})
	dir := t.TempDir()
	trace := filepath.Join(dir, "run.parquet")
	const perLevel = 128
	// Two levels beyond the 4 slots, so that the plateau of decode concurrency stands
	// out from the noise of a loaded machine; 8 requests per worker at c=16 keep every
	// level valid.
	ceiling(t, "record", "--url", srv.URL, "--concurrency", "1,2,4,8,16",
		"--requests-per-level", strconv.Itoa(perLevel), "--warmup", "2", "--prompt-tokens", "64", "--output-tokens", "32",
		"--ignore-eos", "--scrape-interval", "200ms", "-o", trace)

	if _, err := os.Stat(strings.TrimSuffix(trace, ".parquet") + ".metrics.parquet"); err != nil {
		t.Errorf("metrics sidecar missing: %v", err)
	}

	var a analyze.Analysis
	out := ceiling(t, "analyze", trace, "--format", "json")
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("analysis JSON: %v\n%s", err, out)
	}
	if a.Schema != analyze.Schema || len(a.Runs) != 1 {
		t.Fatalf("analysis has schema %q and %d runs, want %q and 1", a.Schema, len(a.Runs), analyze.Schema)
	}
	r := a.Runs[0]
	if len(r.Levels) != 5 {
		t.Fatalf("analysis has %d levels, want 5", len(r.Levels))
	}
	byConc := map[int]analyze.Level{}
	for _, l := range r.Levels {
		byConc[l.Concurrency] = l
		if l.Requests != perLevel || l.Errors != 0 {
			t.Errorf("level c=%d: %d requests, %d errors; want %d and 0", l.Concurrency, l.Requests, l.Errors, perLevel)
		}
		if !l.Valid {
			t.Errorf("level c=%d invalid: %s", l.Concurrency, l.InvalidReason)
		}
	}
	// Beyond the 4 slots requests queue for a slot: TTFT must grow sharply.
	if p50 := func(c int) float64 { return deref(byConc[c].TTFT.P50) }; p50(8) < 2*p50(4) {
		t.Errorf("TTFT p50 at c=8 (%.4fs) is not well above c=4 (%.4fs): no queueing seen", p50(8), p50(4))
	}
	if c := r.Ceilings.Batch; c == nil || math.Abs(*c-4) > 0.75 {
		var levels strings.Builder
		for _, l := range r.Levels {
			fmt.Fprintf(&levels, "\n  c=%d decode %.2f waiting %.2f out %.1f tok/s TTFT p50 %.4fs", l.Concurrency, l.DecodeConcurrency, l.WaitingConcurrency, l.OutputTokS, deref(l.TTFT.P50))
		}
		t.Errorf("batch ceiling = %v, want about 4 (the server's slots); levels:%s", fmtPtr(c), levels.String())
	}

	// The server's own count of requests processing plateaus at its 4 slots beyond
	// them, beside the client's decode concurrency, and the verdict cites both.
	for _, c := range []int{8, 16} {
		l := byConc[c]
		s := l.Server
		if s == nil || s.RunningMean == nil || s.RunningMax == nil {
			t.Errorf("c=%d: no llamacpp:requests_processing in the window: %+v", c, s)
			continue
		}
		t.Logf("c=%d: server requests_processing mean %.2f max %.0f, deferred %.2f; client decode %.2f waiting %.2f",
			c, *s.RunningMean, *s.RunningMax, deref(s.WaitingMean), l.DecodeConcurrency, l.WaitingConcurrency)
		if *s.RunningMax > 4 || *s.RunningMean < 3.5 {
			t.Errorf("c=%d: server running mean %.2f max %.0f, want a plateau at the 4 slots", c, *s.RunningMean, *s.RunningMax)
		}
	}
	ev := strings.Join(r.Ceiling.Evidence, "\n")
	if b := r.ServerBinding; b == nil || b.Limit != "batch" || !strings.Contains(ev, "pinned at its 4 slots") || !strings.Contains(ev, "client side:") {
		t.Errorf("server binding %+v; the verdict does not cite the server's slots and the client side:\n%s", b, ev)
	}

	html := filepath.Join(dir, "report.html")
	ceiling(t, "report", trace, "-o", html)
	browsertest.CheckDrawn(t, browsertest.Chromium(t), html, 8)
	checkAgainstDuckDB(t, trace, r)
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// checkAgainstDuckDB computes per-level figures from the Parquet file with DuckDB, an
// engine that shares no code with ceiling, and compares them with the analysis.
func checkAgainstDuckDB(t *testing.T, trace string, r analyze.Run) {
	t.Helper()
	script := filepath.Join("..", "..", "scripts", "duckdb", "query.mjs")
	if _, err := os.Stat(filepath.Join("..", "..", "scripts", "duckdb", "node_modules", "@duckdb", "node-api")); err != nil {
		requireTool(t, "DuckDB (npm ci --prefix scripts/duckdb)")
	}
	ok := "NOT warmup AND error IS NULL AND status = 200"
	sql := fmt.Sprintf(`SELECT level,
		count(*) FILTER (WHERE NOT warmup) AS requests,
		sum(output_tokens) FILTER (WHERE %[2]s) AS output_tokens,
		quantile_cont((first_token_ns - sent_ns) / 1e9, 0.5) FILTER (WHERE %[2]s AND first_token_ns IS NOT NULL) AS ttft_p50,
		quantile_cont((first_token_ns - sent_ns) / 1e9, 0.99) FILTER (WHERE %[2]s AND first_token_ns IS NOT NULL) AS ttft_p99
		FROM read_parquet('%[1]s') GROUP BY level ORDER BY level`, trace, ok)
	cmd := exec.Command("node", script, sql)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, stderr.String())
	}
	var rows []struct {
		Level        int     `json:"level"`
		Requests     int     `json:"requests"`
		OutputTokens int64   `json:"output_tokens"`
		TTFTP50      float64 `json:"ttft_p50"`
		TTFTP99      float64 `json:"ttft_p99"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output: %v\n%s", err, out)
	}
	if len(rows) != len(r.Levels) {
		t.Fatalf("duckdb sees %d levels, analysis %d", len(rows), len(r.Levels))
	}
	for i, d := range rows {
		l := r.Levels[i]
		if d.Level != l.Level || d.Requests != l.Requests || d.OutputTokens != l.OutputTokens {
			t.Errorf("level %d: duckdb (level %d, %d requests, %d output tokens) != analysis (level %d, %d, %d)",
				i, d.Level, d.Requests, d.OutputTokens, l.Level, l.Requests, l.OutputTokens)
		}
		for _, c := range []struct {
			name      string
			duck, got float64
		}{{"TTFT p50", d.TTFTP50, deref(l.TTFT.P50)}, {"TTFT p99", d.TTFTP99, deref(l.TTFT.P99)}} {
			if math.Abs(c.duck-c.got) > 1e-9*math.Max(1, math.Abs(c.duck)) {
				t.Errorf("level %d %s: duckdb %.9f, analysis %.9f", d.Level, c.name, c.duck, c.got)
			}
		}
	}
}

// requireTool skips when an external tool is missing, except in CI, where the real
// parts are required.
func requireTool(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required in CI", what)
	}
	t.Skipf("%s not available", what)
}

// TestReadmeDuckDBQuery runs the DuckDB query docs/trace-schema.md shows, verbatim, over the
// bundled samples, and checks it against ceiling's own analysis of the sample: a
// documented query that has stopped working is a bug.
func TestReadmeDuckDBQuery(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "docs", "trace-schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, found := strings.Cut(string(readme), "```sql\n")
	sql, _, closed := strings.Cut(rest, "```")
	if !found || !closed {
		t.Fatal("docs/trace-schema.md has no ```sql block")
	}
	if _, err := os.Stat(filepath.Join(root, "scripts", "duckdb", "node_modules", "@duckdb", "node-api")); err != nil {
		requireTool(t, "DuckDB (npm ci --prefix scripts/duckdb)")
	}
	cmd := exec.Command("node", filepath.Join("scripts", "duckdb", "query.mjs"), strings.TrimSuffix(strings.TrimSpace(sql), ";"))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's query fails in DuckDB: %v\n%s", err, stderr.String())
	}
	var rows []struct {
		RunID        string  `json:"run_id"`
		Level        int     `json:"level"`
		Concurrency  int     `json:"concurrency"`
		Requests     int     `json:"requests"`
		OutputTokens int64   `json:"output_tokens"`
		TTFTP50      float64 `json:"ttft_p50_s"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output: %v\n%s", err, out)
	}
	// The query covers every sample run (samples/ holds several): each run's rows
	// are checked against the analysis of its own trace.
	samples, err := filepath.Glob(filepath.Join(root, "samples", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range samples {
		if strings.HasSuffix(path, ".metrics.parquet") {
			continue
		}
		var a analyze.Analysis
		if err := json.Unmarshal([]byte(ceiling(t, "analyze", path, "--format", "json")), &a); err != nil {
			t.Fatal(err)
		}
		run := a.Runs[0]
		var mine []int
		for i, r := range rows {
			if r.RunID == run.RunID {
				mine = append(mine, i)
			}
		}
		if len(mine) != len(run.Levels) {
			t.Fatalf("the query gives %d rows for run %s, %s has %d levels", len(mine), run.RunID, path, len(run.Levels))
		}
		for j, i := range mine {
			r, l := rows[i], run.Levels[j]
			checked++
			if r.Level != l.Level || r.Concurrency != l.Concurrency || r.Requests != l.Requests || r.OutputTokens != l.OutputTokens ||
				math.Abs(r.TTFTP50-deref(l.TTFT.P50)) > 1e-4 {
				t.Errorf("%s row %d: duckdb %+v, analysis level %d c=%d %d requests %d tokens TTFT p50 %.4f",
					path, i, r, l.Level, l.Concurrency, l.Requests, l.OutputTokens, deref(l.TTFT.P50))
			}
		}
	}
	if checked != len(rows) || checked == 0 {
		t.Errorf("checked %d of the query's %d rows", checked, len(rows))
	}
}

// TestSampleVerdict checks what the README promises of the bundled sample: the
// realistic ceiling at the server's 4 slots, bound by its batch limit, with TTFT
// growing beyond it; and that its report says so first.
func TestSampleVerdict(t *testing.T) {
	sample := filepath.Join("..", "..", "samples", "llamacpp-d768-4slots.parquet")
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", sample, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	if c := r.Ceiling; c.Concurrency == nil || *c.Concurrency != 4 || c.Binding != "batch" {
		t.Errorf("sample ceiling %s bound by %q, want 4 bound by batch", fmtPtr(c.Concurrency), c.Binding)
	}
	prev := 0.0
	for _, l := range r.Levels {
		p50 := deref(l.TTFT.P50)
		if l.Concurrency > 4 && p50 < 2*prev {
			t.Errorf("TTFT p50 at c=%d is %.2fs, not well above %.2fs below it", l.Concurrency, p50, prev)
		}
		prev = p50
	}
	html := filepath.Join(t.TempDir(), "sample.html")
	ceiling(t, "report", sample, "-o", html)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	verdict := "Realistic ceiling: 4 concurrent requests, bound by the server&#39;s batch limit"
	v, charts := strings.Index(string(page), verdict), strings.Index(string(page), "Throughput and ceilings")
	if v < 0 || charts < 0 || v > charts {
		t.Errorf("the report does not state the verdict %q before its charts (at %d, charts at %d)", verdict, v, charts)
	}
}
