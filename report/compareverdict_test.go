package report

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/browsertest"
)

// TestComparisonOnFirstScreen: two runs are a baseline and a candidate; the first
// screen (before any chart) says compare's verdict on the ceiling, and the charts
// mark the levels where the candidate differs significantly.
func TestComparisonOnFirstScreen(t *testing.T) {
	a := fixtureCompared()
	page := render(t, a, Options{})
	summary, _, _ := strings.Cut(page, `<section class="why"`)
	for _, want := range []string{
		"candidate vs baseline: ceiling 48 → 64, +33%, significant",
		"baseline: llama-8b-bf16 · candidate: llama-8b-fp8",
		"better: output_tok_s at c=1",
	} {
		if !strings.Contains(html.UnescapeString(summary), want) {
			t.Errorf("the first screen lacks %q", want)
		}
	}
	for _, want := range []string{`significant difference`, `"symbol":"diamond"`, `better +`} {
		if !strings.Contains(page, want) {
			t.Errorf("the charts lack %q", want)
		}
	}

	// Runs of two models are not compared, and the first screen says why.
	a.Runs[1].Model = "Qwen3-32B"
	page = render(t, a, Options{})
	if !strings.Contains(html.UnescapeString(page), `candidate vs baseline: not compared`) ||
		!strings.Contains(html.UnescapeString(page), `the model: "Llama-3.1-8B-Instruct" vs "Qwen3-32B"`) {
		t.Error("two models' runs: the first screen does not say they are not compared, and why")
	}
	if strings.Contains(page, `"symbol":"diamond"`) {
		t.Error("runs not compared, yet the charts mark differences")
	}
}

// fixtureCompared is fixtureTwo with intervals and resampled ceilings, so that
// compare can test it: the candidate's throughput is higher beyond its ±3%.
func fixtureCompared() *analyze.Analysis {
	a := fixtureTwo(8, 400)
	for i := range a.Runs {
		r := &a.Runs[i]
		for j := range r.Levels {
			l := &r.Levels[j]
			l.CI = &analyze.LevelCI{OutputTokS: &analyze.Interval{Low: l.OutputTokS * 0.97, High: l.OutputTokS * 1.03}}
		}
		r.Bootstrap = &analyze.Bootstrap{Ceiling: &analyze.CeilingStability{Share: 1,
			Outcomes: []analyze.CeilingOutcome{{Concurrency: r.Ceiling.Concurrency, Share: 1}}}}
	}
	return a
}

// TestBrowserComparisonMarks: the page with the comparison's marks draws every
// chart in a real browser.
func TestBrowserComparisonMarks(t *testing.T) {
	bin := browsertest.Chromium(t)
	file := filepath.Join(t.TempDir(), "compared.html")
	if err := os.WriteFile(file, []byte(render(t, fixtureCompared(), Options{})), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browsertest.CheckDrawn(t, bin, file, 12)
	if !strings.Contains(dom, "candidate vs baseline: ceiling 48") {
		t.Error("the drawn page lacks the comparison's verdict")
	}
}
