// Package browsertest opens a ceiling HTML report in a real headless Chromium with
// the network blocked and reads back what the page's self-test found: whether every
// chart drew, which script errors occurred, and where drawn labels collide. It also
// takes screenshots, prints to PDF and reads the printed pages back (pdf.go).
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
	return Open(t, bin, file, View{}, extra...)
}

// View is how Open looks at a page: the window size, and where to write a
// screenshot of the first screen and a PDF print (empty: none).
type View struct {
	Width, Height int // 0: the browser's default
	Screenshot    string
	PDF           string
}

// Open is Browse with a window size, a screenshot and a PDF print; one browser
// run does all three after the page's scripts ran.
func Open(t testing.TB, bin, file string, v View, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
		"--disable-component-update", "--disable-sync", "--disable-extensions", "--mute-audio",
		"--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--virtual-time-budget=15000",
		"--hide-scrollbars", "--force-device-scale-factor=1",
	}, extra...)
	if v.Width > 0 && v.Height > 0 {
		args = append(args, "--window-size="+strconv.Itoa(v.Width)+","+strconv.Itoa(v.Height))
	}
	if v.Screenshot != "" {
		args = append(args, "--screenshot="+v.Screenshot)
	}
	if v.PDF != "" {
		args = append(args, "--print-to-pdf="+v.PDF, "--no-pdf-header-footer")
	}
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
	for _, f := range []string{v.Screenshot, v.PDF} {
		if f == "" {
			continue
		}
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Fatalf("chromium wrote no %s (%v)\n%s", f, err, Tail(stderr.String(), 2000))
		}
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
