package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestEngineTraceAnalyzed records a sweep from the test engine, whose timing is
// known, and checks that the analysis finds it: exact counts and tokens, TTFT, TPOT,
// ITL and E2E within scheduling tolerance, Little's-law concurrency, throughput, and
// the batch ceiling at the engine's 2 slots.
func TestEngineTraceAnalyzed(t *testing.T) {
	const (
		ttft   = 50 * time.Millisecond
		gap    = 10 * time.Millisecond
		tokens = 20
		slots  = 2
	)
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: ttft, TokenGap: gap, Slots: slots})
	defer eng.Close()
	trace := filepath.Join(t.TempDir(), "engine.parquet")
	ceiling(t, "record", "--url", eng.URL(), "--concurrency", "1,2,4", "--requests-per-level", "20", "--warmup", "1",
		"--prompt-tokens", "30", "--output-tokens", "20", "--metrics-url", "off", "-o", trace)
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", trace, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	if len(r.Levels) != 3 {
		t.Fatalf("%d levels, want 3", len(r.Levels))
	}
	// One request holds a slot for TTFT + (tokens-1) gaps.
	service := (ttft + (tokens-1)*gap).Seconds()
	decodeShare := ((tokens - 1) * gap).Seconds() / service
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.IsNaN(got) || math.Abs(got-want) > tol {
			t.Errorf("%s = %.4f, want %.4f ± %.4f", name, got, want, tol)
		}
	}
	for _, l := range r.Levels {
		c := float64(l.Concurrency)
		served := math.Min(c, slots)
		if l.Requests != 20 || l.Errors != 0 || l.OutputTokens != 20*tokens {
			t.Errorf("c=%d: %d requests, %d errors, %d output tokens; want 20, 0, %d", l.Concurrency, l.Requests, l.Errors, l.OutputTokens, 20*tokens)
		}
		// Beyond the slots a request waits, on average, for (c - slots) / slots services.
		wantTTFT := ttft.Seconds() + math.Max(0, c-slots)/slots*service
		near("TTFT p50 at c="+itoa(l.Concurrency), deref(l.TTFT.P50), wantTTFT, 0.02+0.15*wantTTFT)
		near("TPOT p50 at c="+itoa(l.Concurrency), deref(l.TPOT.P50), gap.Seconds(), 0.002)
		near("ITL p50 at c="+itoa(l.Concurrency), deref(l.ITL.P50), gap.Seconds(), 0.002)
		near("decode concurrency at c="+itoa(l.Concurrency), l.DecodeConcurrency, served*decodeShare, 0.15*served)
		near("requests in flight at c="+itoa(l.Concurrency), l.DecodeConcurrency+l.WaitingConcurrency, c, 0.1*c)
		near("output tok/s at c="+itoa(l.Concurrency), l.OutputTokS, served*tokens/service, 0.15*served*tokens/service)
	}
	// 5 requests per worker at c=4 keep every level valid.
	for _, l := range r.Levels {
		if !l.Valid {
			t.Errorf("c=%d invalid: %s", l.Concurrency, l.InvalidReason)
		}
	}
	if b := r.Ceilings.Batch; b == nil || *b != slots {
		t.Errorf("batch ceiling %s, want %d (the engine's slots)", fmtPtr(b), slots)
	}
}

func itoa(n int) string { return fmt.Sprint(n) }

// TestEngineInvalidLevelExcluded records a sweep whose top level has too few
// requests for its concurrency (40 at c=32: most workers send one), and checks that
// the analysis marks that level invalid with its reason in the JSON, the text and
// a warning, and keeps the others (TestInvalidLevelsMakeNoCeiling checks the exclusion).
func TestEngineInvalidLevelExcluded(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 5 * time.Millisecond, TokenGap: 2 * time.Millisecond, Slots: 2})
	defer eng.Close()
	trace := filepath.Join(t.TempDir(), "engine.parquet")
	ceiling(t, "record", "--url", eng.URL(), "--concurrency", "1,2,4,32", "--requests-per-level", "40",
		"--prompt-tokens", "10", "--output-tokens", "10", "--metrics-url", "off", "-o", trace)
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", trace, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	for _, l := range r.Levels {
		wantValid := l.Concurrency != 32
		if l.Valid != wantValid {
			t.Errorf("c=%d: valid %v, want %v (%s)", l.Concurrency, l.Valid, wantValid, l.InvalidReason)
		}
		if !l.Valid && !strings.Contains(l.InvalidReason, "steady-state window") {
			t.Errorf("c=%d: reason %q does not name the short window", l.Concurrency, l.InvalidReason)
		}
	}
	found := false
	for _, w := range r.Warnings {
		found = found || strings.Contains(w, "1 of 4 levels are invalid")
	}
	if !found {
		t.Errorf("no warning counting the invalid level in %q", r.Warnings)
	}
	text := ceiling(t, "analyze", trace)
	if !strings.Contains(text, "invalid: level 3 (c=32)") {
		t.Errorf("text output does not list the invalid level:\n%s", text)
	}
}
