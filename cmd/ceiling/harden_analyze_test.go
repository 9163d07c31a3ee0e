package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// Issue 8, analyze side, through the command: what a user meets after a kill, a
// second run to the same file, or a path that is not a file.

// Item 3: the documented recovery path (docs/reliability.md) (`ceiling analyze RUN.parts`, `ceiling report
// RUN.parts`) after a kill -9 works when the server has /metrics: the parts
// directory then holds metrics parts, which analyze used to read as rows and fail
// on ("column run_id is missing").
func TestKill9WithMetricsPartsAnalyzes(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", TokenGap: 2 * time.Millisecond})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "run.parquet")
	parts := out + ".parts"
	args := []string{"record", "--url", eng.URL(), "--concurrency", "1,2,4", "--requests-per-level", "16",
		"--prompt-tokens", "20", "--output-tokens", "100", "--scrape-interval", "20ms", "-o", out}

	child, stderr, exited := startRecorder(t, args[1:]...)

	// Kill once level 1 and its metrics are sealed, with level 2 in flight.
	waitFor(t, "level 1 and its metrics are sealed", stderr, exited, func() bool {
		return sealed(t, parts, "-rows-L0001.parquet") && sealed(t, parts, "-metrics-L0001.parquet")
	})
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil {
		t.Fatal("the recorder finished before it could be killed; the test proves nothing")
	}

	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", parts, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	if got := levelRequests(a); len(got) < 2 || got[0] != 16 || got[1] != 16 {
		t.Fatalf("after kill -9 the parts hold levels with %v requests, want levels 0 and 1 with 16 each", got)
	}
	if len(a.Runs[0].Metrics) == 0 {
		t.Errorf("the metrics parts were not read as the run's metrics; warnings %q", a.Runs[0].Warnings)
	}
	html := filepath.Join(t.TempDir(), "report.html")
	ceiling(t, "report", parts, "-o", html)
	if st, err := os.Stat(html); err != nil || st.Size() == 0 {
		t.Fatalf("report on the parts directory: %v", err)
	}
}

// Item 2: a second recording to the same -o with --metrics-url off leaves the first
// run's sidecar in place; analyze must not show it as the new run's metrics.
func TestSecondRunDoesNotInheritSidecar(t *testing.T) {
	// 5 ms a token: the first run lasts about half a second, so the 20 ms scrapes
	// surely land in it (at full speed it could end before the first scrape).
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", TokenGap: 5 * time.Millisecond})
	defer eng.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "run.parquet")
	first := []string{"record", "--url", eng.URL(), "--concurrency", "1", "--requests-per-level", "4",
		"--prompt-tokens", "20", "--output-tokens", "20", "--scrape-interval", "20ms", "-o", out}
	ceiling(t, first...)
	if _, err := os.Stat(filepath.Join(dir, "run.metrics.parquet")); err != nil {
		t.Fatalf("the first run wrote no sidecar: %v", err)
	}
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", out, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Runs[0].Metrics) == 0 {
		t.Fatalf("the first run's own sidecar was not attached: %q", a.Runs[0].Warnings)
	}

	// The second run to the same path, without metrics. Whether -o needs --force
	// to overwrite is the recorder's business; pass it when the recorder knows it.
	second := append(append([]string{}, first...), "--metrics-url", "off")
	code, _, errs := runCLI(second...)
	if code != exitOK && strings.Contains(errs, "--force") {
		code, _, errs = runCLI(append(second, "--force")...)
	}
	if code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, errs)
	}
	var b analyze.Analysis // a fresh value: decoding into a would keep its metrics
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", out, "--format", "json")), &b); err != nil {
		t.Fatal(err)
	}
	r := b.Runs[0]
	if len(r.Metrics) != 0 {
		t.Errorf("the second run shows the first run's %d metric series", len(r.Metrics))
	}
	if _, err := os.Stat(filepath.Join(dir, "run.metrics.parquet")); err == nil && !containsAny(r.Warnings, "ignored") {
		t.Errorf("the stale sidecar was left out silently: %q", r.Warnings)
	}
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Item 14: analyze and report on a FIFO return at once with an error naming it
// (exit 1) instead of blocking forever.
func TestAnalyzeRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "run.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, cmd := range [][]string{{"analyze", fifo}, {"report", fifo, "-o", filepath.Join(t.TempDir(), "r.html")}} {
		type result struct {
			code int
			errs string
		}
		done := make(chan result, 1)
		go func() {
			code, _, errs := runCLI(cmd...)
			done <- result{code, errs}
		}()
		select {
		case r := <-done:
			if r.code != exitFailed || !strings.Contains(r.errs, fifo) || !strings.Contains(r.errs, "named pipe") {
				t.Errorf("%s on a FIFO: exit %d, stderr %q; want 1 naming the path as a named pipe", cmd[0], r.code, r.errs)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on a FIFO blocked", cmd[0])
		}
	}
}

// Item 18 through the command: a server whose model id carries HTML, an unclosed
// comment, backticks and a pipe is recorded, and `analyze --format markdown` shows
// the id escaped.
func TestMarkdownOfHostileServer(t *testing.T) {
	const model = "m<script>alert(1)</script>`x`|y<!--"
	eng := enginetest.New(enginetest.Config{Model: model})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "run.parquet")
	ceiling(t, "record", "--url", eng.URL(), "--concurrency", "1", "--requests-per-level", "2",
		"--prompt-tokens", "20", "--output-tokens", "5", "--metrics-url", "off", "-o", out)
	md := ceiling(t, "analyze", out, "--format", "markdown")
	if raw := strings.NewReplacer(`\<`, "", "\\`", "").Replace(md); strings.Contains(raw, "<") || strings.Contains(raw, "`") {
		t.Errorf("markdown carries the server's markup raw:\n%s", md)
	}
	if want := "model: m\\<script\\>alert(1)\\</script\\>\\`x\\`\\|y\\<\\!--"; !strings.Contains(md, want) {
		t.Errorf("markdown lacks %q:\n%s", want, md)
	}
}
