package analyze

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// knownProcess is a closed-loop server whose long-run figures are known exactly: each
// of C workers sends requests back to back; a request waits TTFT ~ U[40, 60] ms, then
// streams N tokens one per chunk with gaps of 10 ms × f × j, f ~ U[0.5, 1.5] drawn
// once per request (a slow request is slow throughout, so a request's tokens are
// correlated, as on a real server) and j ~ U[0.9, 1.1] per gap; the worker then idles
// U[0, 1] ms. By the renewal-reward theorem each worker's long-run token rate is
// N / E[cycle], E[cycle] = 50 ms + (N−1) × 10 ms + 0.5 ms, whatever the noise.
type knownProcess struct {
	workers, perWorker, tokens int
}

func (p knownProcess) cycleS() float64 { return 0.050 + float64(p.tokens-1)*0.010 + 0.0005 }
func (p knownProcess) outputTokS() float64 {
	return float64(p.workers) * float64(p.tokens) / p.cycleS()
}
func (p knownProcess) requestS() float64 { return float64(p.workers) / p.cycleS() }

// The known TTFT percentiles: those of U[40, 60] ms.
func (p knownProcess) ttft(q float64) float64 { return 0.040 + q/100*0.020 }

func (p knownProcess) rows(seed uint64) []trace.Row {
	rng := rand.New(rand.NewPCG(seed, 7))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var rows []trace.Row
	var id int64
	for w := range p.workers {
		now := t0 + int64(w)*int64(time.Millisecond)
		for range p.perWorker {
			sent := now
			first := sent + int64(40e6+20e6*rng.Float64())
			f := 0.5 + rng.Float64()
			gaps := make([]int32, p.tokens-1)
			var sum int64
			for k := range gaps {
				gaps[k] = int32(math.Round(10000 * f * (0.9 + 0.2*rng.Float64())))
				sum += int64(gaps[k])
			}
			end := first + sum*1000
			now = end + int64(1e6*rng.Float64())
			id++
			out, prompt := int32(p.tokens), int32(100)
			fin := "length"
			ft := first
			rows = append(rows, trace.Row{
				RunID: "known", Level: 0, Concurrency: int32(p.workers), RequestID: id, Worker: int32(w),
				ScheduledNs: sent, SentNs: sent, FirstTokenNs: &ft, FirstContentNs: &ft, EndNs: end,
				ChunkGapsUs: gaps, PromptTokens: &prompt, OutputTokens: &out, TokensSource: "usage",
				TargetPromptTokens: prompt, MaxTokens: out, Status: 200, FinishReason: &fin,
			})
		}
	}
	return rows
}

func knownProcessInfo(workers int) trace.RunInfo {
	return trace.RunInfo{
		Tool: "ceiling", Version: "test", RunID: "known", Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Target: trace.Target{BaseURL: "http://127.0.0.1:1", Endpoint: "chat", Model: "tiny"},
		Plan:   trace.Plan{Mode: "closed", Concurrency: []int{workers}},
		Server: trace.ServerInfo{Kind: "unknown"},
		Levels: []trace.LevelInfo{{Level: 0, Concurrency: workers}},
	}
}

// TestBootstrapCoversKnownThroughput is the done-when test of the error bars: over
// seeded repetitions of a process whose long-run throughput is known exactly (not
// the sample's own estimate), the 95% intervals must cover the truth in at least 90%
// of them. The traces go through the whole analysis (Parquet, both passes), so the
// binning and block choice are what is tested. Generated rather than recorded from
// record/enginetest: the engine's timing is deterministic up to scheduler jitter, so
// its "known" throughput is the trace's own, and 40 sweeps of it would take minutes;
// here the noise is explicit and its expectation exact.
func TestBootstrapCoversKnownThroughput(t *testing.T) {
	p := knownProcess{workers: 8, perWorker: 40, tokens: 24}
	const reps = 40
	var tokHit, reqHit, ttftHit int
	var widths float64
	for seed := range uint64(reps) {
		path := writeTrace(t, t.TempDir(), "run.parquet", knownProcessInfo(p.workers), p.rows(seed+1))
		a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
		if err != nil {
			t.Fatal(err)
		}
		lv := a.Runs[0].Levels[0]
		if !lv.Valid {
			t.Fatalf("seed %d: level invalid: %s", seed, lv.InvalidReason)
		}
		ci := lv.CI
		if ci == nil || ci.TTFTP50 == nil || ci.OutputTokS == nil || ci.RequestS == nil {
			t.Fatalf("seed %d: no CI: %+v", seed, ci)
		}
		if ci.OutputTokS.Low > lv.OutputTokS || ci.OutputTokS.High < lv.OutputTokS {
			t.Errorf("seed %d: the interval %v does not hold the estimate %g", seed, ci.OutputTokS, lv.OutputTokS)
		}
		in := func(iv Interval, v float64) bool { return iv.Low <= v && v <= iv.High }
		if in(*ci.OutputTokS, p.outputTokS()) {
			tokHit++
		}
		if in(*ci.RequestS, p.requestS()) {
			reqHit++
		}
		if in(*ci.TTFTP50, p.ttft(50)) {
			ttftHit++
		}
		widths += (ci.OutputTokS.High - ci.OutputTokS.Low) / p.outputTokS()
	}
	t.Logf("coverage over %d seeds: output tok/s %d/%d, request/s %d/%d, TTFT p50 %d/%d; mean relative width of the tok/s interval %.1f%%",
		reps, tokHit, reps, reqHit, reps, ttftHit, reps, 100*widths/reps)
	for _, c := range []struct {
		what string
		hit  int
	}{{"output tok/s", tokHit}, {"request/s", reqHit}, {"TTFT p50", ttftHit}} {
		if float64(c.hit) < 0.9*reps {
			t.Errorf("%s: the 95%% interval covers the known value in %d of %d seeds, want ≥ 90%%", c.what, c.hit, reps)
		}
	}
	// An interval that covers by being huge proves nothing.
	if w := widths / reps; w > 0.2 {
		t.Errorf("mean relative width of the tok/s interval %.1f%%: too wide to mean anything", 100*w)
	}
}

// TestBinsAddUpToTheWindow checks that the time bins hold exactly the window's
// tokens, completions and occupancy: the block bootstrap resamples the same
// figures the level reports.
func TestBinsAddUpToTheWindow(t *testing.T) {
	p := knownProcess{workers: 4, perWorker: 10, tokens: 8}
	path := writeTrace(t, t.TempDir(), "run.parquet", knownProcessInfo(p.workers), p.rows(3))
	ctx := context.Background()
	wp := newWindowPass()
	if err := scanTrace(ctx, trace.File{Name: path}, windowColumns(), wp.batch); err != nil {
		t.Fatal(err)
	}
	sp := newStatsPass(SLO{}, wp.levels)
	if err := scanTrace(ctx, trace.File{Name: path}, statsColumns(), sp.batch); err != nil {
		t.Fatal(err)
	}
	l := sp.runs["known"].levels[0]
	sum := func(v *[bootstrapBins]float64) float64 {
		var s float64
		for _, x := range v {
			s += x
		}
		return s
	}
	near(t, "tokens", sum(&l.bins.tokens), l.winTokens, 1e-6)
	near(t, "completions", sum(&l.bins.done), float64(l.winDone), 0)
	near(t, "decode ns", sum(&l.bins.dec), l.decodeNs, 1e-3*l.decodeNs*1e-6)
	near(t, "waiting ns", sum(&l.bins.waitNs), l.waitNs, 1e-3*l.waitNs*1e-6)
	if l.winTokens == 0 || l.decodeNs == 0 {
		t.Fatal("empty window: the test proves nothing")
	}
}

// TestBootstrapIsSeeded: the same trace gives the same intervals.
func TestBootstrapIsSeeded(t *testing.T) {
	p := knownProcess{workers: 4, perWorker: 20, tokens: 8}
	path := writeTrace(t, t.TempDir(), "run.parquet", knownProcessInfo(p.workers), p.rows(5))
	var got [2]LevelCI
	for i := range got {
		a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = *a.Runs[0].Levels[0].CI
	}
	j0, _ := json.Marshal(got[0])
	j1, _ := json.Marshal(got[1])
	if string(j0) != string(j1) || got[0].TTFTP99 == nil {
		t.Errorf("two analyses of one trace differ: %+v vs %+v", got[0], got[1])
	}
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1, Resamples: -1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Runs[0].Bootstrap != nil || a.Runs[0].Levels[0].CI != nil {
		t.Error("Resamples -1 still bootstrapped")
	}
}

// curveRun builds a run of closed-loop levels with the given throughputs and
// resamples whose throughput is the level's times (1 + noise·z), z standard normal.
func curveRun(conc []int, tok []float64, noise float64, n int) (*Run, []*levelResamples) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := &Run{}
	res := make([]*levelResamples, len(conc))
	for i, c := range conc {
		l := Level{Level: i, Concurrency: c, OutputTokS: tok[i], Valid: true}
		r.Levels = append(r.Levels, l)
		rs := &levelResamples{tok: make([]float64, n), req: make([]float64, n), dec: make([]float64, n), wait: make([]float64, n)}
		for b := range n {
			rs.tok[b] = tok[i] * (1 + noise*rng.NormFloat64())
		}
		res[i] = rs
	}
	r.Ceiling.Concurrency = ceilingOf(r.Levels, nil, nil, nil, Options{})
	return r, res
}

// TestCeilingStability: a knee on a flat curve moves between resamples and is
// reported unstable, with a range and a warning; a sharp knee is stable.
func TestCeilingStability(t *testing.T) {
	conc := []int{1, 2, 4, 8, 16, 32}
	for _, tc := range []struct {
		name   string
		tok    []float64
		noise  float64
		stable bool
	}{
		// Gains per doubling of 10%, 9%, 11%, 8%, 10%: every level is near the
		// plateau rule's 10% line, so where the knee falls is up to the noise.
		{"flat", []float64{1000, 1100, 1199, 1331, 1437, 1581}, 0.03, false},
		{"sharp knee", []float64{100, 200, 400, 800, 820, 830}, 0.01, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, res := curveRun(conc, tc.tok, tc.noise, 500)
			st := ceilingStability(r, res, 500, Options{})
			if st == nil {
				t.Fatal("no stability")
			}
			t.Logf("%s: %s (range %s)", tc.name, st.Text, st.RangeText())
			if st.Stable != tc.stable {
				t.Errorf("stable = %v, want %v: %s", st.Stable, tc.stable, st.Text)
			}
			var sum float64
			for _, o := range st.Outcomes {
				sum += o.Share
			}
			near(t, "shares", sum, 1, 1e-9)
			if !tc.stable {
				if len(st.Outcomes) < 2 || st.Low == nil || *st.Low == *st.High {
					t.Errorf("an unstable ceiling needs several outcomes and a range: %+v", st)
				}
				w := stabilityWarning(st)
				if !strings.Contains(w, "not stable") || !strings.Contains(w, st.RangeText()) {
					t.Errorf("warning %q does not say unstable and give the range", w)
				}
			}
		})
	}
}

// TestOrderStatisticsMatchDraws checks the direct draw of a resample's order
// statistics against the plain bootstrap it stands for (draw cnt indices with
// replacement, count, read the percentile): over many resamples the two give the
// same distribution of p50 and p99 (mean and spread), on a skewed sample.
func TestOrderStatisticsMatchDraws(t *testing.T) {
	const cnt, n = 301, 4000
	vals := make([]float64, cnt)
	for i := range vals {
		vals[i] = math.Exp(float64(i) / 40) // skewed, like latencies
	}
	at := func(k int) float64 { return vals[k] }
	r := &levelResamples{}
	d50, d99 := r.percentiles(rand.New(rand.NewPCG(9, 9)), cnt, at, n)

	rng := rand.New(rand.NewPCG(3, 3))
	b50, b99 := make([]float64, n), make([]float64, n)
	sample := make([]float64, cnt)
	for i := range n {
		for j := range sample {
			sample[j] = vals[rng.IntN(cnt)]
		}
		s := summarize(sample)
		b50[i], b99[i] = *s.P50, *s.P99
	}
	moments := func(v []float64) (mean, sd float64) {
		for _, x := range v {
			mean += x
		}
		mean /= float64(len(v))
		for _, x := range v {
			sd += (x - mean) * (x - mean)
		}
		return mean, math.Sqrt(sd / float64(len(v)-1))
	}
	for _, c := range []struct {
		what          string
		direct, plain []float64
	}{{"p50", d50, b50}, {"p99", d99, b99}} {
		dm, ds := moments(c.direct)
		bm, bs := moments(c.plain)
		t.Logf("%s: direct mean %.3f sd %.3f; plain mean %.3f sd %.3f", c.what, dm, ds, bm, bs)
		// The means of 4000 resamples agree to a few standard errors, the spreads to 10%.
		if se := bs / math.Sqrt(n); math.Abs(dm-bm) > 5*se*math.Sqrt2 {
			t.Errorf("%s: mean %.4f (direct) vs %.4f (plain bootstrap)", c.what, dm, bm)
		}
		if math.Abs(ds/bs-1) > 0.1 {
			t.Errorf("%s: sd %.4f (direct) vs %.4f (plain bootstrap)", c.what, ds, bs)
		}
	}
	iv := interval(d50)
	if !(iv.Low < vals[150] && vals[150] < iv.High) {
		t.Errorf("p50 interval %+v does not hold the sample median %g", iv, vals[150])
	}
}

// TestIntervalHoldsEstimate: a window interval always holds the level's own figure.
func TestIntervalHoldsEstimate(t *testing.T) {
	for _, tt := range []struct {
		iv   Interval
		v    float64
		want Interval
	}{
		{Interval{0, 0.37}, 0.5, Interval{0, 0.5}},
		{Interval{1, 2}, 0.5, Interval{0.5, 2}},
		{Interval{1, 2}, 1.5, Interval{1, 2}},
	} {
		if got := around(tt.iv, tt.v); *got != tt.want {
			t.Errorf("around(%v, %g) = %v, want %v", tt.iv, tt.v, *got, tt.want)
		}
	}
}
