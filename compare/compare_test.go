package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fakeRun is a run decoded as from JSON (no resamples: the intervals give the
// standard errors): levels at c=1,2,4 whose throughput is scale × (200, 380, 700)
// tok/s with ±rel intervals, TPOT p50 25 ms ÷ scale, and a ceiling.
type fakeRun struct {
	model, source string
	outputTokens  int
	scale, rel    float64
	levels        []int
	ceiling       *float64
	errors        int
}

func (f fakeRun) run(t *testing.T) analyze.Run {
	t.Helper()
	info := trace.RunInfo{Tool: "ceiling", RunID: f.source, Target: trace.Target{Endpoint: "chat", Model: f.model},
		Plan:   trace.Plan{Mode: "closed", Concurrency: f.levels, PromptTokens: 512, OutputTokens: f.outputTokens},
		Server: trace.ServerInfo{Kind: "vllm", Version: "0.9." + f.source}}
	raw, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	r := analyze.Run{RunID: f.source, Source: f.source + ".parquet", Model: f.model, Info: raw}
	for i, c := range f.levels {
		tok := f.scale * 200 * math.Pow(1.85, math.Log2(float64(c)))
		tpot := 0.025 / f.scale
		ttft := 0.2 / f.scale
		iv := func(v, rel float64) *analyze.Interval {
			return &analyze.Interval{Low: v / (1 + rel), High: v * (1 + rel)}
		}
		r.Levels = append(r.Levels, analyze.Level{Level: i, Concurrency: c, Requests: 200, Errors: f.errors, Valid: true,
			OutputTokS: tok, RequestS: tok / 128,
			TTFT: analyze.Summary{N: 200, P50: &ttft, P99: f64(ttft * 3)},
			TPOT: analyze.Summary{N: 200, P50: &tpot, P99: f64(tpot * 2)},
			CI: &analyze.LevelCI{OutputTokS: iv(tok, f.rel), RequestS: iv(tok/128, f.rel),
				TTFTP50: iv(ttft, f.rel), TTFTP99: iv(ttft*3, 3*f.rel), TPOTP50: iv(tpot, f.rel), TPOTP99: iv(tpot*2, 2*f.rel)}})
	}
	r.Ceiling.Concurrency = f.ceiling
	r.Bootstrap = &analyze.Bootstrap{Ceiling: &analyze.CeilingStability{Share: 1,
		Outcomes: []analyze.CeilingOutcome{{Concurrency: f.ceiling, Share: 1}}}}
	return r
}

func base() fakeRun {
	return fakeRun{model: "m", source: "a", outputTokens: 128, scale: 1, rel: 0.02, levels: []int{1, 2, 4}, ceiling: f64(2)}
}

func TestCompareVerdicts(t *testing.T) {
	with := func(f func(*fakeRun)) fakeRun {
		r := base()
		r.source = "b"
		f(&r)
		return r
	}
	for _, tt := range []struct {
		name       string
		cand       fakeRun
		regression bool
		want       []string // in the verdict
		findings   []string // regressions (metric at where)
		improved   bool
	}{
		{"the same figures", with(func(*fakeRun) {}), false, []string{"no regression", "ceiling 2 → 2"}, nil, false},
		{"10% slower decode", with(func(r *fakeRun) { r.scale = 1 / 1.1 }), true,
			[]string{"REGRESSION", "tpot_p50_s at c=1", "output_tok_s at c=4"},
			[]string{"output_tok_s at c=1", "tpot_p50_s at c=1", "output_tok_s at c=4"}, false},
		{"better", with(func(r *fakeRun) { r.scale = 1.3; r.ceiling = f64(4) }), false,
			[]string{"no regression", "ceiling 2 → 4, +100%, significant"}, nil, true},
		{"worse within the threshold", with(func(r *fakeRun) { r.scale = 0.97 }), false, []string{"no regression"}, nil, false},
		{"a lower ceiling", with(func(r *fakeRun) { r.ceiling = f64(1) }), true, []string{"REGRESSION: ceiling at ceiling"}, []string{"ceiling at ceiling"}, false},
		{"errors", with(func(r *fakeRun) { r.errors = 40 }), true, []string{"error_rate at c=1"}, []string{"error_rate at c=4"}, false},
		{"noisy: not significant", with(func(r *fakeRun) { r.scale, r.rel = 0.9, 0.3 }), false, []string{"no regression", "inconclusive"}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := base()
			if tt.name == "noisy: not significant" {
				a.rel = 0.3
			}
			res, err := Compare([]analyze.Run{a.run(t)}, []analyze.Run{tt.cand.run(t)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Regression != tt.regression {
				t.Errorf("regression %v, want %v: %s", res.Regression, tt.regression, res.Verdict)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Verdict, w) {
					t.Errorf("verdict %q lacks %q", res.Verdict, w)
				}
			}
			var got []string
			for _, f := range res.Regressions {
				got = append(got, f.Metric+" at "+f.Where)
			}
			for _, w := range tt.findings {
				if !strings.Contains(strings.Join(got, ";"), w) {
					t.Errorf("regressions %v lack %q", got, w)
				}
			}
			if tt.improved != (len(res.Improvements) > 0) {
				t.Errorf("improvements %v, want some: %v", res.Improvements, tt.improved)
			}
			if tt.name == "noisy: not significant" && (res.Needed == nil || res.Needed.RequestsPerLevel <= 200) {
				t.Errorf("inconclusive without a need for more requests: %+v", res.Needed)
			}
			if !strings.Contains(strings.Join(res.Differences, ";"), "server: vllm 0.9.a → vllm 0.9.b") {
				t.Errorf("the server version is not named among the differences: %v", res.Differences)
			}
		})
	}
}

func TestNotComparable(t *testing.T) {
	with := func(f func(*fakeRun)) fakeRun {
		r := base()
		r.source = "b"
		f(&r)
		return r
	}
	for _, tt := range []struct {
		name string
		base []fakeRun
		cand []fakeRun
		want string
	}{
		{"model", []fakeRun{base()}, []fakeRun{with(func(r *fakeRun) { r.model = "other" })}, `the model: "m" vs "other"`},
		{"workload", []fakeRun{base()}, []fakeRun{with(func(r *fakeRun) { r.outputTokens = 256 })}, "plan.output_tokens 128 vs 256"},
		{"no shared level", []fakeRun{base()}, []fakeRun{with(func(r *fakeRun) { r.levels = []int{8, 16} })}, "share no level"},
		{"repeats of two configurations", []fakeRun{base(), with(func(r *fakeRun) { r.outputTokens = 64 })}, []fakeRun{base()}, "the baseline's runs are not repeats"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs := func(fs []fakeRun) []analyze.Run {
				var out []analyze.Run
				for _, f := range fs {
					out = append(out, f.run(t))
				}
				return out
			}
			_, err := Compare(runs(tt.base), runs(tt.cand), Options{})
			var nc *NotComparableError
			if !errors.As(err, &nc) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want a NotComparableError naming %q", err, tt.want)
			}
		})
	}
	// Option errors name the fields.
	for _, o := range []Options{{Threshold: 1.5}, {Gate: []string{"speed"}}} {
		_, err := Compare([]analyze.Run{base().run(t)}, []analyze.Run{base().run(t)}, o)
		if err == nil || !(strings.HasPrefix(err.Error(), "threshold") || strings.HasPrefix(err.Error(), "gate")) {
			t.Errorf("%+v: error %v, want one naming the field", o, err)
		}
	}
}

// TestRepeatsAreTheUnit: with three runs a side the spread between them is the
// noise, whatever each run's own interval says: runs that scatter by ±8% do not
// make a 4% difference significant, runs that agree make a 10% one.
func TestRepeatsAreTheUnit(t *testing.T) {
	side := func(name string, scales ...float64) []analyze.Run {
		var out []analyze.Run
		for i, s := range scales {
			f := base()
			f.source, f.scale, f.rel = name+string(rune('1'+i)), s, 0.001
			out = append(out, f.run(t))
		}
		return out
	}
	res, err := Compare(side("a", 1, 1.08, 0.92), side("b", 0.96, 1.04, 0.88), Options{Gate: []string{"output_tok_s"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != "repeats" || res.Regression {
		t.Errorf("method %s, regression %v: %s", res.Method, res.Regression, res.Verdict)
	}
	if res.Needed == nil || res.Needed.RepeatsPerSide <= 3 {
		t.Errorf("inconclusive without more repeats asked: %+v", res.Needed)
	}
	res, err = Compare(side("a", 1, 1.01, 0.99), side("b", 0.9, 0.91, 0.89), Options{Gate: []string{"output_tok_s"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Regression || res.Levels[0].Metrics[0].Method != "repeats" {
		t.Errorf("a 10%% drop across agreeing repeats: %s", res.Verdict)
	}
}

func TestHolm(t *testing.T) {
	// p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") in R.
	got := holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("holm: got %v, want %v", got, want)
			break
		}
	}
}

func TestFisherExact(t *testing.T) {
	for _, tt := range []struct {
		x1, n1, x2, n2 int
		// want: the sum, in exact rational arithmetic, of the hypergeometric
		// probabilities no larger than the observed table's (Python's
		// fractions.Fraction and math.comb); the first is Fisher's tea tasting.
		want float64
	}{
		{3, 4, 1, 4, 0.4857142857142857},
		{0, 50, 0, 50, 1},
		{0, 100, 10, 100, 0.0015420521254357006},
		{1, 9, 11, 14, 0.0027594561852200836},
	} {
		if got := fisherExact(tt.x1, tt.n1, tt.x2, tt.n2); math.Abs(got-tt.want) > 1e-9*tt.want {
			t.Errorf("fisherExact(%d/%d, %d/%d) = %.10g, want %.10g", tt.x1, tt.n1, tt.x2, tt.n2, got, tt.want)
		}
	}
}

// TestMarkdownGolden pins the PR-comment form: the verdict first, one table.
func TestMarkdownGolden(t *testing.T) {
	b := base()
	c := base()
	c.source, c.scale = "b", 1/1.1
	res, err := Compare([]analyze.Run{b.run(t)}, []analyze.Run{c.run(t)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md, txt bytes.Buffer
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "❌ **candidate vs baseline: REGRESSION") || strings.Count(md.String(), "\n|---") != 1 {
		t.Errorf("markdown does not start with the verdict or holds other than one table:\n%s", md.String())
	}
	for name, got := range map[string][]byte{"slowdown.md": md.Bytes(), "slowdown.txt": txt.Bytes()} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./compare -update)", err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s differs from the golden file (go test ./compare -update):\n%s", name, got)
		}
	}
}

// TestTailNeedsRequests: one run a side tests a p99 only from minTailRequests
// requests per level (below, the bootstrap never draws beyond the largest value
// and its interval is too narrow); repeats test it at any size.
func TestTailNeedsRequests(t *testing.T) {
	p99 := func(res *Result) MetricDiff {
		for _, d := range res.Levels[0].Metrics {
			if d.Metric == "ttft_p99_s" {
				return d
			}
		}
		t.Fatal("no ttft_p99_s")
		return MetricDiff{}
	}
	for _, tt := range []struct {
		n      int
		tested bool
	}{{minTailRequests - 1, false}, {minTailRequests, true}} {
		a, b := base().run(t), base().run(t)
		for _, r := range []*analyze.Run{&a, &b} {
			for i := range r.Levels {
				r.Levels[i].TTFT.N = tt.n
			}
		}
		res, err := Compare([]analyze.Run{a}, []analyze.Run{b}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := p99(res); (d.P != nil) != tt.tested || (!tt.tested && !strings.Contains(d.Note, "rests on its few largest values")) {
			t.Errorf("%d requests: p %v, note %q; tested want %v", tt.n, d.P, d.Note, tt.tested)
		}
	}
	two := []analyze.Run{base().run(t), base().run(t)}
	res, err := Compare(two, two, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := p99(res); d.P == nil || d.Method != "repeats" {
		t.Errorf("repeats: the p99 is not tested: %+v", d)
	}
}
