package report

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/browsertest"
)

// TestBrowser opens reports in headless Chromium and checks that every chart drew
// (its SVG holds shapes and its series hold data), that no script error occurred,
// and that hostile strings injected nothing, even with every tooltip opened once.
func TestBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	cases := []struct {
		name string
		a    *analyze.Analysis
		// minCharts guards against a page that "passes" by drawing nothing.
		minCharts int
	}{
		{"one run", fixture(10, 500), 12},
		{"two runs", fixtureTwo(5, 40), 12},
		{"hostile strings", fixtureHostile(), 10},
		{"nulls", fixtureEmpty(3), 6},
		{"zero levels", fixtureEmpty(0), 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(dir, "r"+strconv.Itoa(i)+".html")
			f, err := os.Create(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := Write(f, tc.a, Options{Title: tc.a.Runs[0].Model}); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			dom := browsertest.CheckDrawn(t, bin, file, tc.minCharts)
			st := browsertest.Status(t, dom)
			if st["injected"] != "0" {
				t.Errorf("%s injected elements found", st["injected"])
			}
			if strings.Contains(dom, `<img src="x"`) || strings.Contains(dom, "<img src=x") {
				t.Errorf("an injected <img> is in the DOM")
			}
			// Every chart has its print copy, drawn as SVG at the print width.
			if n := strings.Count(dom, `class="chart-print"`); tc.minCharts > 0 && strings.Count(dom, `viewBox="0 0 `) < n {
				t.Errorf("%d charts but fewer print copies with a viewBox", n)
			}
		})
	}
}

// TestBrowserNoDecompressionStream checks the plain message for browsers that cannot
// unpack the library: the page is opened with DecompressionStream removed.
func TestBrowserNoDecompressionStream(t *testing.T) {
	bin := browsertest.Chromium(t)
	html := render(t, fixture(3, 10), Options{})
	// Remove the API the way an old browser lacks it, before the page script runs.
	html = strings.Replace(html, "<script>", "<script>delete window.DecompressionStream;</script><script>", 1)
	file := filepath.Join(t.TempDir(), "old.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browsertest.Browse(t, bin, file)
	st := browsertest.Status(t, dom)
	if st["state"] != "nolib" || st["errors"] != "" {
		t.Errorf("state %q errors %q, want nolib and none", st["state"], st["errors"])
	}
	if !strings.Contains(dom, "cannot unpack the chart library") {
		t.Errorf("no message about the missing DecompressionStream")
	}
}
