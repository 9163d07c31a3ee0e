package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/compare"
	"github.com/ceiling-llm/ceiling/record/enginetest"
	"gonum.org/v1/gonum/stat/distuv"
)

// compareEngine is the engine the comparison tests record: a token every
// TokenGap (the decode step), 4 slots (a batch ceiling at 4), so that a sweep
// of 2, 4, 8 has a ceiling to compare. slow scales the decode step.
func compareEngine(slow float64) enginetest.Config {
	return enginetest.Config{Model: "m", TTFT: 20 * time.Millisecond,
		TokenGap: time.Duration(slow * float64(8*time.Millisecond)), Slots: 4}
}

// compareSweep is the sweep recorded for each side: its levels and requests.
var compareSweep = []string{"--concurrency", "2,4,8", "--requests-per-level", "60", "--warmup", "2",
	"--prompt-tokens", "30", "--output-tokens", "16", "--metrics-url", "off"}

// recordEngine records compareSweep against a fresh engine of cfg into dir/name.
func recordEngine(t *testing.T, cfg enginetest.Config, dir, name string, extra ...string) string {
	t.Helper()
	eng := enginetest.New(cfg)
	defer eng.Close()
	out := filepath.Join(dir, name)
	args := append(append([]string{"record", "--url", eng.URL(), "-o", out}, compareSweep...), extra...)
	code, _, errs := runCLI(args...)
	if code != exitOK {
		t.Fatalf("ceiling %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// compareJSON runs ceiling compare --format json and returns its exit code and result.
func compareJSON(t *testing.T, args ...string) (int, *compare.Result, string) {
	t.Helper()
	code, out, errs := runCLI(append([]string{"compare", "--format", "json"}, args...)...)
	if code == exitUsage {
		return code, nil, errs
	}
	var r compare.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("compare %v: exit %d, output not JSON: %v\n%s\n%s", args, code, err, out, errs)
	}
	return code, &r, errs
}

// recordMany records len(cfgs) sweeps, a few at a time (they mostly wait on
// the engines' timers), and returns their paths in order. The recorder runs as
// a binary built without the race detector, as the real-server tests do: under
// -race an in-process client on 2 busy cores moved the throughput of A/A runs by
// more than 5% (3 false alarms in 20, all on output tok/s), which measured the
// instrumented client rather than the comparison.
func recordMany(t *testing.T, dir string, cfgs []enginetest.Config) []string {
	t.Helper()
	bin := filepath.Join(dir, "ceiling")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := make([]string, len(cfgs))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			eng := enginetest.New(cfg)
			defer eng.Close()
			out[i] = filepath.Join(dir, fmt.Sprintf("run%02d.parquet", i))
			args := append([]string{"record", "--url", eng.URL(), "-o", out[i]}, compareSweep...)
			if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				t.Errorf("recording %d: %v\n%s", i, err, b)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// comparePairs is the number of A/A and of A/B pairs TestCompareErrorRates
// records (CEILING_COMPARE_PAIRS overrides it).
const comparePairs = 20

// TestCompareErrorRates measures what the gate promises on the test engine: the
// false-alarm rate on A/A pairs (one configuration recorded twice) and the power
// on A/B pairs whose candidate's decode steps are 10% slower. Each pair is two
// independent recordings of compareSweep; the A recordings of the A/A pairs are
// reused as the baselines of the A/B pairs (each pair still independent of the
// others of its kind). It asserts at most 3 false alarms in 20 (a true rate of
// 5% passes with probability 98.4%) and at least 16 detections in 20 (a true
// power of 80% passes with probability 63%, of 95% with 99.7%), and writes the
// figures into docs/compare.md with -update; without it the figures there must
// not contradict the measured ones (Fisher's exact test at 1%).
func TestCompareErrorRates(t *testing.T) {
	if testing.Short() {
		t.Skip("records 60 sweeps on the test engine (about 3 minutes)")
	}
	n := comparePairs
	if v := os.Getenv("CEILING_COMPARE_PAIRS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("CEILING_COMPARE_PAIRS=%q: want a positive number", v)
		}
	}
	cfgs := make([]enginetest.Config, 0, 3*n)
	for range 2 * n {
		cfgs = append(cfgs, compareEngine(1))
	}
	for range n {
		cfgs = append(cfgs, compareEngine(1.1))
	}
	start := time.Now()
	runs := recordMany(t, t.TempDir(), cfgs)
	recorded := time.Since(start)

	var m errorRates
	m.pairs = n
	for i := range n {
		code, r, errs := compareJSON(t, runs[2*i], runs[2*i+1])
		switch {
		case code == exitUsage:
			t.Fatalf("A/A pair %d: exit 2: %s", i, errs)
		case code == exitFailed:
			m.falseAlarms++
			t.Logf("A/A pair %d: false alarm: %s", i, r.Verdict)
		}
		if len(r.Regressions)+len(r.Improvements) > 0 {
			m.aaSignificant++
		}
		code, r, errs = compareJSON(t, runs[2*i], runs[2*n+i])
		switch {
		case code == exitUsage:
			t.Fatalf("A/B pair %d: exit 2: %s", i, errs)
		case code == exitFailed:
			m.detected++
		default:
			t.Logf("A/B pair %d: slowdown missed: %s", i, r.Verdict)
		}
	}
	t.Logf("recorded %d sweeps in %s; %s", len(runs), recorded.Round(time.Second), m.line())
	if n == comparePairs {
		if m.falseAlarms > 3 {
			t.Errorf("%d false alarms in %d A/A pairs: more than a 5%% rate gives (at most 3 in 20 with probability 98.4%%)", m.falseAlarms, n)
		}
		if m.detected < 16 {
			t.Errorf("%d of %d 10%% slowdowns detected: below the 80%% power target", m.detected, n)
		}
	}

	path := filepath.Join("..", "..", "docs", "compare.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if *update && n == comparePairs {
		out, err := replaceMeasured(string(doc), m.block())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	stated, err := parseMeasured(string(doc))
	if err != nil {
		t.Fatalf("%s: %v (run go test ./cmd/ceiling -run TestCompareErrorRates -update)", path, err)
	}
	if p := fisherP(stated.falseAlarms, stated.pairs, m.falseAlarms, m.pairs); p < 0.01 {
		t.Errorf("docs/compare.md states %d false alarms in %d A/A pairs, this run measured %d in %d (Fisher p = %.3g): update it", stated.falseAlarms, stated.pairs, m.falseAlarms, m.pairs, p)
	}
	if p := fisherP(stated.detected, stated.pairs, m.detected, m.pairs); p < 0.01 {
		t.Errorf("docs/compare.md states %d detections in %d A/B pairs, this run measured %d in %d (Fisher p = %.3g): update it", stated.detected, stated.pairs, m.detected, m.pairs, p)
	}
}

// errorRates are the counts of TestCompareErrorRates.
type errorRates struct {
	pairs, falseAlarms, aaSignificant, detected int
}

func (m errorRates) line() string {
	return fmt.Sprintf("false alarms (exit 1 on A/A) %d/%d, A/A pairs with any significant gated difference %d/%d, 10%% slowdowns detected (exit 1) %d/%d",
		m.falseAlarms, m.pairs, m.aaSignificant, m.pairs, m.detected, m.pairs)
}

// block is the generated part of docs/compare.md.
func (m errorRates) block() string {
	lo, hi := clopperPearson(m.falseAlarms, m.pairs)
	plo, phi := clopperPearson(m.detected, m.pairs)
	return fmt.Sprintf(`| measure | count | rate | 95%% interval (Clopper–Pearson) |
|---|---:|---:|---|
| false alarms: exit 1 on an A/A pair | %d of %d | %.0f%% | %.0f%%–%.0f%% |
| A/A pairs with any significant gated difference (better or worse) | %d of %d | %.0f%% | %s |
| power: exit 1 on a 10%% slower decode step | %d of %d | %.0f%% | %.0f%%–%.0f%% |
`, m.falseAlarms, m.pairs, 100*float64(m.falseAlarms)/float64(m.pairs), 100*lo, 100*hi,
		m.aaSignificant, m.pairs, 100*float64(m.aaSignificant)/float64(m.pairs), cpText(m.aaSignificant, m.pairs),
		m.detected, m.pairs, 100*float64(m.detected)/float64(m.pairs), 100*plo, 100*phi)
}

func cpText(k, n int) string {
	lo, hi := clopperPearson(k, n)
	return fmt.Sprintf("%.0f%%–%.0f%%", 100*lo, 100*hi)
}

const (
	measuredBegin = "<!-- measured by TestCompareErrorRates: begin -->"
	measuredEnd   = "<!-- measured by TestCompareErrorRates: end -->"
)

func replaceMeasured(doc, block string) (string, error) {
	i, j := strings.Index(doc, measuredBegin), strings.Index(doc, measuredEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("docs/compare.md lacks the markers %q and %q", measuredBegin, measuredEnd)
	}
	return doc[:i+len(measuredBegin)] + "\n" + block + doc[j:], nil
}

var measuredRE = regexp.MustCompile(`(?s)false alarms: exit 1 on an A/A pair \| (\d+) of (\d+) .*power: exit 1 on a 10% slower decode step \| (\d+) of (\d+)`)

func parseMeasured(doc string) (errorRates, error) {
	i, j := strings.Index(doc, measuredBegin), strings.Index(doc, measuredEnd)
	if i < 0 || j < i {
		return errorRates{}, fmt.Errorf("no measured block")
	}
	mm := measuredRE.FindStringSubmatch(doc[i:j])
	if mm == nil {
		return errorRates{}, fmt.Errorf("the measured block holds no counts")
	}
	v := make([]int, 4)
	for k := range v {
		v[k], _ = strconv.Atoi(mm[k+1])
	}
	if v[1] != v[3] {
		return errorRates{}, fmt.Errorf("A/A and A/B pairs differ in number: %d vs %d", v[1], v[3])
	}
	return errorRates{pairs: v[1], falseAlarms: v[0], detected: v[2]}, nil
}

// clopperPearson is the exact 95% interval of a binomial proportion k of n.
func clopperPearson(k, n int) (lo, hi float64) {
	if k > 0 {
		lo = betaQuantile(0.025, float64(k), float64(n-k+1))
	}
	hi = 1
	if k < n {
		hi = betaQuantile(0.975, float64(k+1), float64(n-k))
	}
	return lo, hi
}

func betaQuantile(p, a, b float64) float64 {
	return distuv.Beta{Alpha: a, Beta: b}.Quantile(p)
}

// fisherP is the two-sided p-value of Fisher's exact test of k1 of n1 against k2 of n2.
func fisherP(k1, n1, k2, n2 int) float64 {
	k := k1 + k2
	lchoose := func(n, r int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(r + 1))
		c, _ := math.Lgamma(float64(n - r + 1))
		return a - b - c
	}
	total := lchoose(n1+n2, k)
	lp := func(x int) float64 { return lchoose(n1, x) + lchoose(n2, k-x) - total }
	obs, p := lp(k1), 0.0
	for x := max(0, k-n2); x <= min(k, n1); x++ {
		if l := lp(x); l <= obs+1e-7 {
			p += math.Exp(l)
		}
	}
	return math.Min(1, p)
}

// TestCompareExitCodes is the done-when of ceiling compare on the test engine:
// exit 0 on A/A, 1 on a 10% slower decode step (naming the metric and the
// level, in text and markdown), 0 when the candidate is the faster one, 0 or 1
// likewise with repeats as the unit, and 2 with the reason for another workload,
// an unreadable input and bad flags.
func TestCompareExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("records five sweeps on the test engine")
	}
	dir := t.TempDir()
	runs := recordMany(t, dir, []enginetest.Config{compareEngine(1), compareEngine(1), compareEngine(1.1), compareEngine(1.1)})
	a1, a2, b1, b2 := runs[0], runs[1], runs[2], runs[3]
	w := recordEngine(t, compareEngine(1), dir, "w.parquet", "--output-tokens", "24")

	code, r, errs := compareJSON(t, a1, a2)
	if code != exitOK {
		t.Errorf("A/A: exit %d, want 0: %v %s", code, r, errs)
	}
	code, r, _ = compareJSON(t, a1, b1)
	if code != exitFailed || !r.Regression {
		t.Fatalf("10%% slower decode: exit %d, want 1: %+v", code, r)
	}
	named := false
	for _, f := range r.Regressions {
		named = named || (f.Metric == "tpot_p50_s" && strings.HasPrefix(f.Where, "c="))
	}
	if !named || !strings.Contains(r.Verdict, "tpot_p50_s at c=") {
		t.Errorf("the slowdown's regression does not name tpot_p50_s at a level: %s", r.Verdict)
	}
	code, text, _ := runCLI("compare", a1, b1)
	if code != exitFailed || !strings.HasPrefix(text, "candidate vs baseline: REGRESSION: ") || !strings.Contains(text, "tpot_p50_s at c=") {
		t.Errorf("text: exit %d:\n%s", code, text)
	}
	code, md, _ := runCLI("compare", a1, b1, "--format", "markdown")
	if code != exitFailed || !strings.HasPrefix(md, "❌ **candidate vs baseline: REGRESSION") || !strings.Contains(md, "| **REGRESSION** |") {
		t.Errorf("markdown: exit %d:\n%s", code, md)
	}
	code, r, _ = compareJSON(t, b1, a1)
	if code != exitOK || len(r.Improvements) == 0 {
		t.Errorf("a faster candidate: exit %d, improvements %v, want 0 and some", code, r.Improvements)
	}
	code, r, _ = compareJSON(t, "--baseline", a1+","+a2, "--candidate", b1+","+b2)
	if code != exitFailed || r.Method != "repeats" {
		t.Errorf("repeats, 10%% slower: exit %d, method %s, want 1 and repeats: %s", code, r.Method, r.Verdict)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{a1, w}, "plan.output_tokens 16 vs 24"},
		{[]string{a1, filepath.Join(dir, "missing.parquet")}, "missing.parquet"},
		{[]string{a1}, "want BASELINE CANDIDATE"},
		{[]string{a1, a2, "--threshold", "2"}, "--threshold"},
		{[]string{a1, a2, "--gate", "speed"}, `--gate: unknown metric "speed"`},
		{[]string{a1, a2, "--format", "xml"}, "--format"},
		{[]string{"--baseline", a1, a2}, "give both --baseline and --candidate"},
	} {
		code, _, errs := runCLI(append([]string{"compare"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("compare %v: exit %d, stderr %q; want 2 naming %q", tt.args, code, errs, tt.want)
		}
	}
}
