package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// TestWhatIfSaysWhereFiguresComeFrom (issue 28, item 6), on the public H100 vLLM
// sweep (Llama-3.1-8B, valid levels 1-32, invalid 64-256): --to-kv-dtype fp8 put
// "measured 1,578 (at c=32)" beside "predicted 7,951" at c≈608 with nothing said.
// Now each ceiling row names its concurrency, the predicted one is marked an
// extrapolation 19× past the highest valid level, the first note compares the two
// at equal concurrency (c=32: +11%), and the invalid levels read "invalid", not
// "beyond model".
func TestWhatIfSaysWhereFiguresComeFrom(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*h100*.json"))
	if err != nil || len(files) != 9 {
		t.Fatalf("want the 9 H100 files, got %d (%v)", len(files), err)
	}
	run := filepath.Join(t.TempDir(), "h100.parquet")
	ceiling(t, append(append([]string{"import"}, files...), "-o", run)...)
	args := []string{"whatif", run, "--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm", "--gpus", "1", "--to-kv-dtype", "fp8"}
	var doc analyze.WhatIfDoc
	if err := json.Unmarshal([]byte(ceiling(t, append(args, "--format", "json")...)), &doc); err != nil {
		t.Fatal(err)
	}
	res := doc.WhatIf[0]
	m, p := res.Rows[0], res.Rows[1]
	if m.OutputTokSAt == nil || *m.OutputTokSAt != 32 {
		t.Errorf("measured row's throughput at %v, want c=32", m.OutputTokSAt)
	}
	if p.OutputTokSAt == nil || *p.OutputTokSAt < 500 || !strings.Contains(p.Extrapolation, "× the highest valid measured level (c=32)") {
		t.Errorf("predicted row at %v, extrapolation %q: want c≈608 marked an extrapolation past c=32", p.OutputTokSAt, p.Extrapolation)
	}
	if len(res.Notes) == 0 || !strings.HasPrefix(res.Notes[0], "at equal concurrency first: at c=32 (the measured ceiling) measured 1578 tok/s, predicted ") {
		t.Errorf("first note %q, want the equal-concurrency comparison", res.Notes)
	}
	invalid := 0
	for _, l := range res.Levels {
		if l.Concurrency >= 64 {
			if !l.Invalid || l.OutputTokS != nil {
				t.Errorf("c=%g: invalid %t, predicted %+v: an invalid measured level has nothing to carry", l.Concurrency, l.Invalid, l.OutputTokS)
			}
			invalid++
		} else if l.Invalid {
			t.Errorf("c=%g marked invalid", l.Concurrency)
		}
	}
	if invalid != 3 {
		t.Errorf("%d invalid levels, want 3 (64, 128, 256)", invalid)
	}
	text := ceiling(t, args...)
	for _, want := range []string{"1578 (c=32)", "(c=608) EXTRAPOLATED", "EXTRAPOLATED: an extrapolation: c≈608 is 19.0×"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// The c=64 row: the measured throughput, then "invalid" in the predicted column
	// (whose width follows the widest predicted figure).
	if !regexp.MustCompile(`(?m)^ +64 +2203 +invalid `).MatchString(text) {
		t.Errorf("text lacks the c=64 row with its prediction invalid:\n%s", text)
	}
	if strings.Contains(text, "beyond model") {
		t.Errorf("invalid levels labelled \"beyond model\":\n%s", text)
	}
}
