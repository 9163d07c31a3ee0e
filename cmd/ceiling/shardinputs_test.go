package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestAnalyzeShardsDirectly: analyze and report given the three shard traces of a
// sweep (one shard late) merge them as `ceiling merge` does: one run, the same
// levels and figures as the merged trace's, the late shard named on stderr and in
// the run's warnings; a single shard given alone is analyzed as it is.
func TestAnalyzeShardsDirectly(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 100 * time.Millisecond, TokenGap: 20 * time.Millisecond, Slots: 64})
	defer eng.Close()
	merged, _ := shardedSweep(t, eng.URL(), 3, 2, 2*time.Second, "--concurrency", "6", "--duration-per-level", "4s",
		"--prompt-tokens", "20", "--output-tokens", "20", "--metrics-url", "off")
	dir := filepath.Dir(merged)
	shards := []string{filepath.Join(dir, "run-2.parquet"), filepath.Join(dir, "run-0.parquet"), filepath.Join(dir, "run-1.parquet")}

	code, stdout, stderr := runCLI(append(append([]string{"analyze"}, shards...), "--format", "json")...)
	if code != exitOK {
		t.Fatalf("analyze of the shards exited %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning: level 0: shard 2 started") {
		t.Errorf("stderr does not name the late shard 2:\n%s", stderr)
	}
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 1 {
		t.Fatalf("%d runs from 3 shards of one sweep, want 1", len(a.Runs))
	}
	got, want := a.Runs[0], analyzeJSON(t, merged)
	if !strings.HasPrefix(got.Source, "3 shards merged: ") {
		t.Errorf("source %q does not say the shards were merged", got.Source)
	}
	if !containsSubstring(got.Warnings, "shard 2 started") {
		t.Errorf("warnings lack the late shard: %q", got.Warnings)
	}
	if len(got.Levels) != len(want.Levels) {
		t.Fatalf("%d levels, the merged trace has %d", len(got.Levels), len(want.Levels))
	}
	for i := range got.Levels {
		g, w := got.Levels[i], want.Levels[i]
		if g.Requests != w.Requests || g.OutputTokS != w.OutputTokS || deref(g.TTFT.P50) != deref(w.TTFT.P50) || g.Valid != w.Valid {
			t.Errorf("level %d: shards given directly %d requests %.3f tok/s TTFT p50 %.6f valid %v; merged trace %d %.3f %.6f %v",
				g.Level, g.Requests, g.OutputTokS, deref(g.TTFT.P50), g.Valid, w.Requests, w.OutputTokS, deref(w.TTFT.P50), w.Valid)
		}
	}

	html := filepath.Join(t.TempDir(), "report.html")
	if code, _, stderr := runCLI(append(append([]string{"report"}, shards...), "-o", html)...); code != exitOK {
		t.Fatalf("report of the shards exited %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "shard 2 started") {
		t.Errorf("the report of the shards does not show the late shard (read error %v)", err)
	}

	one := analyzeJSON(t, shards[1])
	if strings.HasPrefix(one.Source, "3 shards") || one.Levels[0].Requests >= got.Levels[0].Requests {
		t.Errorf("a single shard was not analyzed alone: source %q, %d requests", one.Source, one.Levels[0].Requests)
	}
}

func containsSubstring(list []string, s string) bool {
	for _, v := range list {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}
