package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// firstScreen is the report's summary section: the verdict, the comparison table
// and the key-number cards, everything above the evidence.
func firstScreen(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `id="summary"`)
	j := strings.Index(page, `id="evidence"`)
	if j < 0 {
		j = strings.Index(page, `class="toc"`)
	}
	if i < 0 || j < i {
		t.Fatalf("no summary section in the page")
	}
	return page[i:j]
}

// TestH100PeerSweepHeadlineFromValidData: the public H100 vLLM sweep (Llama-3.1-8B,
// 10 req/s under max_concurrency 1..256; levels 64-256 are arrival-limited and
// invalid). With the capacity model the KV figure (~304 requests, modelled reserve) lies far beyond
// the last valid level (32): it is shown as a prediction, never as the realistic
// ceiling, and no first-screen figure (peak, "at the ceiling") comes from an invalid
// level, in a single-run report and in a comparison alike. The advice to test
// higher speaks vLLM's flags.
func TestH100PeerSweepHeadlineFromValidData(t *testing.T) {
	h100, err := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*h100*.json"))
	if err != nil || len(h100) != 9 {
		t.Fatalf("want the 9 H100 files, got %d (%v)", len(h100), err)
	}
	l40s, err := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*l40s*.json"))
	if err != nil || len(l40s) != 8 {
		t.Fatalf("want the 8 L40S files, got %d (%v)", len(l40s), err)
	}
	model := []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm", "--gpus", "1"}
	r := analyzeRunJSON(t, append(append([]string{}, h100...), model...)...)
	if c := r.Ceiling.Concurrency; c != nil && *c > 32 {
		t.Errorf("realistic ceiling %v beyond the last valid level (32)", *c)
	}
	if r.Ceiling.Binding == "kv" {
		t.Errorf("realistic ceiling bound by the modelled KV cache: %v", r.Ceiling.Evidence)
	}
	p := r.Ceiling.Prediction
	if p == nil || p.Limit != "kv" || p.ValidUpTo != 32 || p.Concurrency < 250 || p.Concurrency > 400 {
		t.Errorf("prediction %+v, want the KV figure (~304) beyond valid data up to 32", p)
	}
	text := ceiling(t, append(append([]string{"analyze"}, h100...), model...)...)
	for _, w := range []string{"predicted (not reached by valid data up to 32): kv ~304", "vllm bench serve --request-rate inf"} {
		if !strings.Contains(text, w) {
			t.Errorf("analyze lacks %q", w)
		}
	}
	if strings.Contains(text, "--requests-per-level") {
		t.Errorf("analyze advises ceiling's own flags for an imported vLLM run")
	}

	dir := t.TempDir()
	for name, args := range map[string][]string{
		"single":  append(append([]string{}, h100...), model...),
		"compare": append(append(append([]string{}, h100...), l40s...), model...),
	} {
		html := filepath.Join(dir, name+".html")
		ceiling(t, append(append([]string{"report"}, args...), "-o", html)...)
		page, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		top := firstScreen(t, string(page))
		// c=64, 128 and 256 are invalid: none of their figures may headline.
		for _, bad := range []string{"2,590", "at concurrency 256", "at concurrency 128", "at concurrency 64", "at 256", "at 128", "Realistic ceiling: 315", "100% of resamples"} {
			if strings.Contains(top, bad) {
				t.Errorf("%s report: first screen shows %q, a figure from an invalid level or the model", name, bad)
			}
		}
		if !strings.Contains(top, "not reached by valid data up to 32") {
			t.Errorf("%s report: first screen does not give the KV figure as a prediction", name)
		}
	}
}
