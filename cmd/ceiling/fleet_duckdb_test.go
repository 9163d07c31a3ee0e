package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestDuckDBFleetQuery runs the fleet query of docs/trace-schema.md on a directory
// of three runs (two recorded from test engines of different speeds, and the
// committed sample) and checks every run's levels against ceiling analyze of its
// own trace: successful requests, TTFT p50 and p99, and the per-run highest
// concurrency within the 1 s TTFT p99.
func TestDuckDBFleetQuery(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "trace-schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, found := strings.Cut(string(doc), "<!-- fleet query:")
	_, rest, found2 := strings.Cut(rest, "```sql\n")
	sql, _, closed := strings.Cut(rest, "```")
	if !found || !found2 || !closed {
		t.Fatal("docs/trace-schema.md has no ```sql block after its fleet query marker")
	}
	duck, err := filepath.Abs(filepath.Join(root, "scripts", "duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(duck, "node_modules", "@duckdb", "node-api")); err != nil {
		requireTool(t, "DuckDB (npm ci --prefix scripts/duckdb)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		requireTool(t, "node")
	}

	dir := t.TempDir()
	traces := filepath.Join(dir, "traces")
	if err := os.Mkdir(traces, 0o755); err != nil {
		t.Fatal(err)
	}
	var files []string
	for i, ttft := range []time.Duration{20 * time.Millisecond, 60 * time.Millisecond} {
		eng := enginetest.New(enginetest.Config{Model: "m", TTFT: ttft, TokenGap: 2 * time.Millisecond, Slots: 2})
		path := filepath.Join(traces, []string{"a.parquet", "b.parquet"}[i])
		ceiling(t, "record", "--url", eng.URL(), "--concurrency", "1,2,4", "--requests-per-level", "12", "--warmup", "1",
			"--prompt-tokens", "20", "--output-tokens", "5", "--metrics-url", "off", "-o", path)
		eng.Close()
		files = append(files, path)
	}
	sample, err := os.ReadFile(filepath.Join(root, "samples", "llamacpp-d768-4slots.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(traces, "sample.parquet"), sample, 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(traces, "sample.parquet"))

	cmd := exec.Command("node", filepath.Join(duck, "query.mjs"), strings.TrimSuffix(strings.TrimSpace(sql), ";"))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the fleet query fails in DuckDB: %v\n%s", err, stderr.String())
	}
	var rows []struct {
		RunID       string   `json:"run_id"`
		Level       int      `json:"level"`
		Concurrency int      `json:"concurrency"`
		OK          int      `json:"ok_requests"`
		P50         float64  `json:"ttft_p50_s"`
		P99         float64  `json:"ttft_p99_s"`
		MaxConc     *float64 `json:"max_concurrency_ttft_p99_1s"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	checked := 0
	for _, f := range files {
		var a analyze.Analysis
		if err := json.Unmarshal([]byte(ceiling(t, "analyze", f, "--format", "json")), &a); err != nil {
			t.Fatal(err)
		}
		r := a.Runs[0]
		if seen[r.RunID] {
			t.Fatalf("run id %s twice: the fleet must hold distinct runs", r.RunID)
		}
		seen[r.RunID] = true
		var want *float64
		for _, l := range r.Levels {
			if l.TTFT.N > 0 && *l.TTFT.P99 <= 1.0 && (want == nil || float64(l.Concurrency) > *want) {
				want = ptrF(float64(l.Concurrency))
			}
		}
		for _, l := range r.Levels {
			var got *int
			for i := range rows {
				if rows[i].RunID == r.RunID && rows[i].Level == l.Level {
					got = &i
				}
			}
			if got == nil {
				t.Errorf("run %s level %d: no DuckDB row", r.RunID, l.Level)
				continue
			}
			d := rows[*got]
			checked++
			if d.Concurrency != l.Concurrency || d.OK != l.TTFT.N ||
				math.Abs(d.P50-*l.TTFT.P50) > 1e-9 || math.Abs(d.P99-*l.TTFT.P99) > 1e-9 {
				t.Errorf("run %s level %d: duckdb c=%d n=%d p50 %.9f p99 %.9f, analysis c=%d n=%d p50 %.9f p99 %.9f",
					r.RunID, l.Level, d.Concurrency, d.OK, d.P50, d.P99, l.Concurrency, l.TTFT.N, *l.TTFT.P50, *l.TTFT.P99)
			}
			if (d.MaxConc == nil) != (want == nil) || (want != nil && *d.MaxConc != *want) {
				t.Errorf("run %s: duckdb max concurrency within 1 s TTFT p99 %v, analysis %v", r.RunID, d.MaxConc, want)
			}
		}
	}
	if checked != len(rows) || len(seen) != 3 {
		t.Errorf("checked %d of %d DuckDB rows over %d runs, want every row of 3 runs", checked, len(rows), len(seen))
	}
}

func ptrF(v float64) *float64 { return &v }
