// Package browsertest opens a ceiling HTML report in a real headless Chromium with
// the network blocked and reads back what the page's self-test found: whether every
// chart drew, and which script errors occurred.
//
// The report page writes its findings as data- attributes of <div id="ceiling-status">
// when opened with the #selftest fragment; --dump-dom returns the DOM after the page's
// scripts ran under a virtual-time budget, so the asynchronous unpacking of the chart
// library finishes.
package browsertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Chromium finds the browser: $CHROMIUM, else /usr/bin/chromium. Without one the test
// skips, except in CI (CI=true), where a missing browser is a failure.
func Chromium(t testing.TB) string {
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

// Browse opens file with the network blocked and returns the DOM after the page's
// scripts ran. extra flags go before the URL.
func Browse(t testing.TB, bin, file string, extra ...string) string {
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
		t.Fatalf("chromium on %s: %v\n%s", file, err, Tail(stderr.String(), 2000))
	}
	return string(out)
}

// Tail returns the last n bytes of s, for failure messages.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

var (
	statusRe = regexp.MustCompile(`<div id="ceiling-status"[^>]*>`)
	attrRe   = regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`)
)

// Status returns the data- attributes of #ceiling-status in dom.
func Status(t testing.TB, dom string) map[string]string {
	t.Helper()
	tag := statusRe.FindString(dom)
	if tag == "" {
		t.Fatalf("no #ceiling-status in the DOM:\n%s", Tail(dom, 1500))
	}
	st := map[string]string{}
	for _, m := range attrRe.FindAllStringSubmatch(tag, -1) {
		st[m[1]] = m[2]
	}
	return st
}

// CheckDrawn opens file and fails the test unless the page finished, every chart drew
// (at least minCharts of them) and no script error occurred. It returns the DOM.
func CheckDrawn(t testing.TB, bin, file string, minCharts int) string {
	t.Helper()
	dom := Browse(t, bin, file)
	st := Status(t, dom)
	if st["state"] != "done" {
		t.Errorf("%s: state %q, want done (errors: %q)", file, st["state"], st["errors"])
	}
	if st["errors"] != "" {
		t.Errorf("%s: script errors: %s", file, st["errors"])
	}
	expected, _ := strconv.Atoi(st["charts-expected"])
	drawn, _ := strconv.Atoi(st["charts-drawn"])
	if drawn != expected || expected < minCharts {
		t.Errorf("%s: %d of %d charts drew (want at least %d); blank: %q", file, drawn, expected, minCharts, st["charts-blank"])
	}
	return dom
}
