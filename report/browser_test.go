package report

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
)

// chromium finds the browser: $CHROMIUM, else /usr/bin/chromium. Without one the
// test skips, except in CI (CI=true), where a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium not found at %s (set CHROMIUM): %v", path, err)
		}
		t.Skipf("chromium not found at %s (set CHROMIUM, or apt-get install chromium): %v", path, err)
	}
	return path
}

// browse opens file with the network blocked and returns the DOM after the page's
// scripts ran (virtual time lets the asynchronous unpacking finish).
func browse(t *testing.T, bin, file string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
		"--disable-component-update", "--disable-sync", "--disable-extensions", "--mute-audio",
		"--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--virtual-time-budget=15000",
	}, extra...)
	args = append(args, "--dump-dom", "file://"+file+"#selftest")
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("chromium timed out on %s", file)
		}
		t.Fatalf("chromium on %s: %v\n%s", file, err, tail(stderr.String(), 2000))
	}
	return string(out)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

var statusRe = regexp.MustCompile(`<div id="ceiling-status"[^>]*>`)
var attrRe = regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`)

func status(t *testing.T, dom string) map[string]string {
	t.Helper()
	tag := statusRe.FindString(dom)
	if tag == "" {
		t.Fatalf("no #ceiling-status in the DOM:\n%s", tail(dom, 1500))
	}
	st := map[string]string{}
	for _, m := range attrRe.FindAllStringSubmatch(tag, -1) {
		st[m[1]] = m[2]
	}
	return st
}

// TestBrowser opens reports in headless Chromium and checks that every chart drew
// (its canvas holds pixels and its series hold data), that no script error occurred,
// and that hostile strings injected nothing, even with every tooltip opened once.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
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
			dom := browse(t, bin, file)
			st := status(t, dom)
			if st["state"] != "done" {
				t.Errorf("state %q, want done (errors: %q)", st["state"], st["errors"])
			}
			if st["errors"] != "" {
				t.Errorf("script errors: %s", st["errors"])
			}
			expected, _ := strconv.Atoi(st["charts-expected"])
			drawn, _ := strconv.Atoi(st["charts-drawn"])
			if drawn != expected || expected < tc.minCharts {
				t.Errorf("%d of %d charts drew (want at least %d); blank: %q", drawn, expected, tc.minCharts, st["charts-blank"])
			}
			if st["injected"] != "0" {
				t.Errorf("%s injected elements found", st["injected"])
			}
			if strings.Contains(dom, `<img src="x"`) || strings.Contains(dom, "<img src=x") {
				t.Errorf("an injected <img> is in the DOM")
			}
			if expected > 0 && !strings.Contains(dom, `src="data:image/png;base64,`) {
				t.Errorf("no print images were made")
			}
		})
	}
}

// TestBrowserNoDecompressionStream checks the plain message for browsers that cannot
// unpack the library: the page is opened with DecompressionStream removed.
func TestBrowserNoDecompressionStream(t *testing.T) {
	bin := chromium(t)
	html := render(t, fixture(3, 10), Options{})
	// Remove the API the way an old browser lacks it, before the page script runs.
	html = strings.Replace(html, "<script>", "<script>delete window.DecompressionStream;</script><script>", 1)
	file := filepath.Join(t.TempDir(), "old.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browse(t, bin, file)
	st := status(t, dom)
	if st["state"] != "nolib" || st["errors"] != "" {
		t.Errorf("state %q errors %q, want nolib and none", st["state"], st["errors"])
	}
	if !strings.Contains(dom, "cannot unpack the chart library") {
		t.Errorf("no message about the missing DecompressionStream")
	}
}
