package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/compare"
	"github.com/ceiling-llm/ceiling/internal/realserver"
)

// TestRealLlamaCompare: against real llama-servers, ceiling compare exits 0 on
// A/A repeats (one server recorded four times, two repeats a side: run-to-run
// variance is the unit) and 1 on a real slowdown, naming the metric and the
// level: the same served model name backed by the 768-wide model instead of the
// 64-wide one (a heavier deployment of "the same model", as another quantization
// would be), compared one run a side and as repeats.
func TestRealLlamaCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("real-server test skipped in -short mode")
	}
	fast := realserver.Start(t, realserver.Options{Slots: 4, Threads: 1})
	slow := realserver.Start(t, realserver.Options{Slots: 4, Threads: 1, Model: realserver.ModelPath(t, "d768"), Alias: "tiny-d64"})
	dir := t.TempDir()
	// A binary without the race detector: under -race the client's own cost on a
	// 2-core machine shared with the servers would be what is measured.
	bin := filepath.Join(dir, "ceiling")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runBin := func(args ...string) (code int, stdout, stderr string) {
		var o, e bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatalf("ceiling %s: %v", strings.Join(args, " "), err)
		}
		return code, o.String(), e.String()
	}
	record := func(url, name string) string {
		out := filepath.Join(dir, name+".parquet")
		code, _, errs := runBin("record", "--url", url, "-o", out, "--concurrency", "1,2,4", "--requests-per-level", "60",
			"--warmup", "2", "--prompt-tokens", "64", "--output-tokens", "32", "--ignore-eos")
		if code != exitOK {
			t.Fatalf("recording %s: exit %d\n%s", name, code, errs)
		}
		return out
	}
	// Interleaved, so that a change in the machine's load falls on both sides.
	var a, b []string
	for i := range 4 {
		a = append(a, record(fast.URL, "a"+string(rune('1'+i))))
		if i < 2 {
			b = append(b, record(slow.URL, "b"+string(rune('1'+i))))
		}
	}
	result := func(args ...string) (int, *compare.Result) {
		t.Helper()
		code, out, errs := runBin(append([]string{"compare", "--format", "json"}, args...)...)
		var r compare.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("compare %v: exit %d, not JSON: %v\n%s", args, code, err, errs)
		}
		t.Logf("compare %s: exit %d: %s", strings.Join(args, " "), code, r.Verdict)
		return code, &r
	}
	if code, r := result("--baseline", a[0]+","+a[1], "--candidate", a[2]+","+a[3]); code != exitOK || r.Method != "repeats" {
		t.Errorf("A/A repeats: exit %d (method %s), want 0: %s", code, r.Method, r.Verdict)
	}
	for _, args := range [][]string{{a[0], b[0]}, {"--baseline", a[0] + "," + a[1], "--candidate", b[0] + "," + b[1]}} {
		code, r := result(args...)
		if code != exitFailed || len(r.Regressions) == 0 || !strings.Contains(r.Verdict, " at c=") {
			t.Errorf("slowdown %v: exit %d, want 1 naming a metric at a level: %s", args, code, r.Verdict)
		}
	}
}

// TestRealLlamaCompareRates measures the false-alarm rate on a real
// llama-server: CEILING_COMPARE_LLAMA_PAIRS=N records N A/A pairs (the same
// server recorded 2×R times, the sides' recordings interleaved) with
// CEILING_COMPARE_LLAMA_REPEATS=R runs a side (default 1: each level's
// bootstrap; more: repeats as the unit), and counts how many exit 1 or hold a
// significant gated difference. A recording takes several seconds on a 2-core
// machine, so it runs only when asked (docs/compare.md gives its figures).
func TestRealLlamaCompareRates(t *testing.T) {
	v := os.Getenv("CEILING_COMPARE_LLAMA_PAIRS")
	if v == "" {
		t.Skip("set CEILING_COMPARE_LLAMA_PAIRS=N to measure N A/A pairs on llama.cpp")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("CEILING_COMPARE_LLAMA_PAIRS=%q: want a positive number", v)
	}
	reps := 1
	if v := os.Getenv("CEILING_COMPARE_LLAMA_REPEATS"); v != "" {
		if reps, err = strconv.Atoi(v); err != nil || reps < 1 {
			t.Fatalf("CEILING_COMPARE_LLAMA_REPEATS=%q: want a positive number", v)
		}
	}
	srv := realserver.Start(t, realserver.Options{Slots: 4, Threads: 1})
	dir := t.TempDir()
	bin := filepath.Join(dir, "ceiling")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var alarms, significant int
	for i := range n {
		var sides [2][]string
		for k := range 2 * reps {
			run := filepath.Join(dir, fmt.Sprintf("p%d-%d.parquet", i, k))
			out, err := exec.Command(bin, "record", "--url", srv.URL, "-o", run, "--concurrency", "1,2,4", "--requests-per-level", "60",
				"--warmup", "2", "--prompt-tokens", "64", "--output-tokens", "32", "--ignore-eos").CombinedOutput()
			if err != nil {
				t.Fatalf("recording: %v\n%s", err, out)
			}
			sides[k%2] = append(sides[k%2], run)
		}
		cmd := exec.Command(bin, "compare", "--format", "json", "--baseline", strings.Join(sides[0], ","), "--candidate", strings.Join(sides[1], ","))
		out, err := cmd.Output()
		var r compare.Result
		if jerr := json.Unmarshal(out, &r); jerr != nil {
			t.Fatalf("pair %d: %v, not JSON: %v", i, err, jerr)
		}
		if r.Regression {
			alarms++
		}
		if len(r.Regressions)+len(r.Improvements) > 0 {
			significant++
		}
		t.Logf("A/A pair %d: %s", i, r.Verdict)
	}
	t.Logf("llama.cpp, %d run(s) a side: false alarms (exit 1) %d/%d, pairs with a significant gated difference %d/%d", reps, alarms, n, significant, n)
}
