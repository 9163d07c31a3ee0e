package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/realserver"
)

// The KV cache as a real llama.cpp server lays it out: one cache shared by the slots
// (--kv-unified) or a cache per slot, told apart by what the server did under the
// sweep (see analyze/policy_kvlayout.go). Short sweeps of the tiny d64 model.

func analyzeRunJSON(t *testing.T, args ...string) analyze.Run {
	t.Helper()
	var a analyze.Analysis
	out := ceiling(t, append([]string{"analyze", "--format", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &a); err != nil || len(a.Runs) != 1 {
		t.Fatalf("analysis JSON (%v, %d runs):\n%s", err, len(a.Runs), out)
	}
	return a.Runs[0]
}

// TestRealLlamaUnifiedCacheBinds: 16 slots share one 1,024-token cache and each
// request needs ~160 tokens, so the cache holds ~6.4 requests, far fewer than the
// slots. Past it the server fails requests with "Context size has been exceeded.":
// the analysis reports the real cache (1,024, not 16 × 1,024), names those failures
// KV exhaustion with the server's words, and puts the KV ceiling at or below
// capacity ÷ mean request.
func TestRealLlamaUnifiedCacheBinds(t *testing.T) {
	if testing.Short() {
		t.Skip("real-server test skipped in -short mode")
	}
	const cache = 1024
	// The d768 model batches like a memory-bound GPU: its throughput rises with the
	// requests in flight until the cache stops them. The tiny d64 model's does not on
	// 2 loaded cores (the CPU saturates at c=1 or 2, and that knee headed the
	// verdict in CI), which hid the cache this test is about.
	srv := realserver.Start(t, realserver.Options{Slots: 16, Context: cache, Unified: true, Model: realserver.ModelPath(t, "d768")})
	dir := t.TempDir()
	trace := filepath.Join(dir, "unified.parquet")
	// Where every request of c=8 fails, the recorder stops the sweep there with exit
	// 1 and keeps the levels recorded: that level is the evidence looked for.
	code, _, stderr := runCLI("record", "--url", srv.URL, "--concurrency", "2,4,8", "--requests-per-level", "24", "--warmup", "1",
		"--prompt-tokens", "110", "--output-tokens", "50", "--ignore-eos", "--scrape-interval", "500ms", "-o", trace)
	if code != exitOK && (code != exitFailed || !strings.Contains(stderr, "Context size has been exceeded.")) {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	r := analyzeRunJSON(t, trace)

	c := r.Capacity
	if c == nil || c.Layout != analyze.LayoutUnified || c.KVCapacityTokens == nil || c.Source != "declared" {
		t.Fatalf("capacity %+v, want the unified layout with a declared figure", c)
	}
	if got := float64(*c.KVCapacityTokens); math.Abs(got-cache)/cache > 0.05 {
		t.Errorf("reported KV capacity %v tokens, want the real cache %d within 5%%", got, cache)
	}
	var failing *analyze.Level
	for i := range r.Levels {
		if r.Levels[i].Concurrency == 8 {
			failing = &r.Levels[i]
		}
	}
	if failing == nil || failing.ErrorKinds[analyze.KindKVExhausted] < failing.Requests/2 {
		t.Fatalf("c=8 level %+v: want most requests failed as %s", failing, analyze.KindKVExhausted)
	}
	if len(failing.ErrorGroups) == 0 || failing.ErrorGroups[0].Kind != analyze.KindKVExhausted ||
		!strings.Contains(failing.ErrorGroups[0].Message, "Context size has been exceeded.") {
		t.Errorf("c=8 error groups %+v: want kv_exhausted with the server's text", failing.ErrorGroups)
	}
	mean := *c.MeanRequestTokens
	kv := r.Ceilings.KV
	if kv == nil || *kv > cache/mean+1e-9 || *kv < 4 {
		t.Errorf("KV ceiling %v, want at or below %.1f (capacity ÷ mean request) and at least 4 (served without KV errors)", fmtPtr(kv), cache/mean)
	}
	if r.Ceiling.Binding != "kv" || r.Ceiling.Concurrency == nil || kv == nil || *r.Ceiling.Concurrency != *kv {
		t.Errorf("realistic ceiling %s %v, want the KV ceiling %v", r.Ceiling.Binding, fmtPtr(r.Ceiling.Concurrency), fmtPtr(kv))
	}
	text := ceiling(t, "analyze", trace)
	for _, w := range []string{"kv_exhausted", "Context size has been exceeded.", "layout: unified"} {
		if !strings.Contains(text, w) {
			t.Errorf("analyze text lacks %q:\n%s", w, text)
		}
	}
}

// TestRealLlamaPerSlotLoadedMachine: 4 slots, each owning 256 of the 1,024 cells
// (-np 4 without --kv-unified), swept while a busy goroutine loads the machine. The
// slots held more tokens at once than one slot's n_ctx, so each owns its cache: the
// capacity is 4 × 256, the ceiling the 4 slots (batch), and no pooled "the KV cache
// holds N requests" figure appears anywhere.
func TestRealLlamaPerSlotLoadedMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("real-server test skipped in -short mode")
	}
	srv := realserver.Start(t, realserver.Options{Slots: 4, Context: 1024})
	// Deliberate load, bounded by the test: one goroutine spinning until the sweep ends.
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		x := 0
		for ctx.Err() == nil {
			for i := range 1 << 16 {
				x += i
			}
			runtime.Gosched()
		}
		_ = x
	}()
	dir := t.TempDir()
	trace := filepath.Join(dir, "perslot.parquet")
	ceiling(t, "record", "--url", srv.URL, "--concurrency", "4,8", "--requests-per-level", "40", "--warmup", "1",
		"--prompt-tokens", "150", "--output-tokens", "32", "--ignore-eos", "--scrape-interval", "500ms", "-o", trace)
	stop()
	<-done
	r := analyzeRunJSON(t, trace)

	c := r.Capacity
	if c == nil || c.Layout != analyze.LayoutPerSlot || c.KVCapacityTokens == nil || *c.KVCapacityTokens != 1024 || *c.SlotContextTokens != 256 {
		t.Fatalf("capacity %+v, want a cache per slot: 4 × 256 = 1,024 tokens", c)
	}
	if r.Ceilings.Batch == nil || *r.Ceilings.Batch != 4 || r.Ceiling.Binding != "batch" || r.Ceiling.Concurrency == nil || *r.Ceiling.Concurrency != 4 {
		t.Errorf("ceiling %s %v (batch %v), want batch 4 (the server's slots)", r.Ceiling.Binding, fmtPtr(r.Ceiling.Concurrency), fmtPtr(r.Ceilings.Batch))
		// This test fails now and then on a loaded 2-core CI machine (about 1 run
		// in 4 under -race): say why the ceiling was not the batch, so the next
		// failure can be told apart from a regression.
		t.Logf("ceiling evidence: %q", r.Ceiling.Evidence)
		for _, l := range r.Levels {
			t.Logf("level c=%d: valid %t %s", l.Concurrency, l.Valid, l.InvalidReason)
		}
	}
	if r.Ceilings.KV != nil {
		t.Errorf("a pooled KV ceiling %v for a cache per slot", *r.Ceilings.KV)
	}
	html := filepath.Join(dir, "perslot.html")
	ceiling(t, "report", trace, "-o", html)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "Realistic ceiling: 4 concurrent requests, bound by the server") || strings.Contains(string(page), "KV cache holds") {
		t.Errorf("report verdict does not say batch 4 without a pooled KV figure")
	}
}

// TestSlotBoundSampleVerdict: the bundled real sample (4 slots of n_ctx 2,048,
// 384-token requests) says 4, batch, and never "the KV cache holds 21.3": each slot
// holds one request, and the layout, which llama.cpp does not report, is given as
// both bounds.
func TestSlotBoundSampleVerdict(t *testing.T) {
	sample := filepath.Join("..", "..", "samples", "llamacpp-d768-4slots.parquet")
	r := analyzeRunJSON(t, sample)
	if r.Ceiling.Binding != "batch" || r.Ceiling.Concurrency == nil || *r.Ceiling.Concurrency != 4 {
		t.Errorf("sample ceiling %s %v, want batch 4", r.Ceiling.Binding, fmtPtr(r.Ceiling.Concurrency))
	}
	if c := r.Capacity; c == nil || c.Layout != analyze.LayoutUnknown || c.KVCapacityTokens != nil || c.KVCapacityMinTokens == nil || *c.KVCapacityMinTokens != 2048 || *c.KVCapacityMaxTokens != 8192 {
		t.Errorf("sample capacity %+v, want the bounds 2,048-8,192 and no declared figure", r.Capacity)
	}
	text := ceiling(t, "analyze", sample)
	html := filepath.Join(t.TempDir(), "sample.html")
	ceiling(t, "report", sample, "-o", html)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"analyze": text, "report": string(page)} {
		if strings.Contains(s, "21.3") || strings.Contains(s, "KV cache holds") {
			t.Errorf("%s shows a pooled KV figure for per-slot caches", what)
		}
	}
}

// TestUnifiedSampleCapacity: the second bundled real sample (8 slots sharing one
// 1,024-token cache, 192-token requests) reports the real cache, not 8 × 1,024, its
// layout from the server's failures, those failures as KV exhaustion with the
// server's words, and the KV ceiling at capacity ÷ mean request, confirmed by the
// failing level although no valid level reaches it.
func TestUnifiedSampleCapacity(t *testing.T) {
	r := analyzeRunJSON(t, filepath.Join("..", "..", "samples", "llamacpp-d64-unified-8slots.parquet"))
	c := r.Capacity
	if c == nil || c.Layout != analyze.LayoutUnified || c.KVCapacityTokens == nil || *c.KVCapacityTokens != 1024 || c.Source != "declared" {
		t.Fatalf("capacity %+v, want 1,024 declared, unified", c)
	}
	var kv int
	for _, l := range r.Levels {
		kv += l.ErrorKinds[analyze.KindKVExhausted]
		for _, g := range l.ErrorGroups {
			if g.Kind != analyze.KindKVExhausted || !strings.Contains(g.Message, "Context size has been exceeded.") {
				t.Errorf("c=%d error group %+v", l.Concurrency, g)
			}
		}
	}
	if kv == 0 {
		t.Error("no kv_exhausted failures")
	}
	if r.Ceilings.KV == nil || math.Abs(*r.Ceilings.KV - 1024.0 / *c.MeanRequestTokens) > 1e-9 || r.Ceiling.Prediction != nil {
		t.Errorf("kv ceiling %v (prediction %+v), want 1024 / %v confirmed by the failures", fmtPtr(r.Ceilings.KV), r.Ceiling.Prediction, *c.MeanRequestTokens)
	}
}
