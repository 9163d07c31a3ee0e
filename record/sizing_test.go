package record

import (
	"context"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

func TestLevelSizerRule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	ok := func(w int32, sent, end time.Duration) *trace.Row {
		ft := at(sent + 10*time.Millisecond)
		return &trace.Row{Worker: w, SentNs: at(sent), EndNs: at(end), FirstTokenNs: &ft, Status: 200}
	}
	// c=2, 1 s requests, a 10 s steady state: worker 1 starts at 1 s, so the
	// window starts there; the rule needs ceil(1.25·8) = 10 completions in it, 10 s
	// of it, and 1.25·2 = 2.5 median lifetimes (2.5 s).
	s := newLevelSizer(2, t0, time.Minute)
	s.steady = 10 * time.Second
	s.observe(&trace.Row{Worker: 1, SentNs: at(0), EndNs: at(time.Second), Warmup: true}) // warm-up does not count
	for i := range 3 {
		s.observe(ok(0, time.Duration(i)*time.Second, time.Duration(i+1)*time.Second))
	}
	if s.enough(t0.Add(30 * time.Second)) {
		t.Fatal("enough before worker 1 completed anything")
	}
	// Worker 1 from 1 s; worker 0 goes on. Completions at 1 s and 2 s (worker 0's)
	// are at or after the window's start... only those ending ≥ 1 s count.
	for i := range 8 {
		s.observe(ok(1, time.Duration(i+1)*time.Second, time.Duration(i+2)*time.Second))
	}
	if s.enough(t0.Add(30 * time.Second)) {
		t.Fatal("enough with the window 8 s long (1 s to 9 s), under the 10 s steady state")
	}
	s.observe(ok(0, 9*time.Second, 11*time.Second))
	if !s.enough(t0.Add(30 * time.Second)) {
		t.Fatalf("not enough: window 10 s, %d completions in it", s.inWindow)
	}
	// Long requests: the window must also last 2.5 median lifetimes.
	l := newLevelSizer(1, t0, time.Hour)
	l.steady = 10 * time.Second
	for i := range 10 {
		l.observe(ok(0, time.Duration(i)*6*time.Second, time.Duration(i+1)*6*time.Second))
	}
	// Window 0..60 s, median lifetime 6 s: 2.5·6 = 15 s ≤ 60 s, 10 completions.
	if !l.enough(t0.Add(61 * time.Second)) {
		t.Error("not enough after 10 completions over 10 lifetimes")
	}
	// Failures do not count as completions.
	f := newLevelSizer(1, t0, time.Hour)
	f.steady = time.Second
	for i := range 20 {
		e := "http_400"
		f.observe(&trace.Row{Worker: 0, SentNs: at(time.Duration(i) * time.Second), EndNs: at(time.Duration(i+1) * time.Second), Status: 400, Error: &e})
	}
	if f.enough(t0.Add(30 * time.Second)) {
		t.Error("failed requests counted as completions")
	}
	// The cap stops a level that never satisfies the rule.
	c := newLevelSizer(8, t0, time.Minute)
	if c.enough(t0.Add(59*time.Second)) || !c.enough(t0.Add(time.Minute)) || !c.stoppedByCap() {
		t.Error("the cap does not stop the level at --max-level-duration")
	}
}

// TestRecordDefaultLevelSizeIsValid records without a count or duration, with
// requests long against the (shortened) steady state, as 4-second requests are
// against 30 s: every level is valid by analyze's rule. Before the one rule, the
// recorder stopped after 4 requests per worker and the steady state, and analyze
// then found c=1 with 4 completions where it needs 8.
func TestRecordDefaultLevelSizeIsValid(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 20 * time.Millisecond, TokenGap: 10 * time.Millisecond, Slots: 8})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.RequestsPerLevel = 0
	o.Concurrency = []int{1, 2, 8}
	o.OutputTokens = 12 // about 140 ms a request
	o.IgnoreEOS = true
	o.steadyState = 300 * time.Millisecond
	o.MetricsURL = "off"
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, li := range info.Levels {
		if d := li.Ended.Sub(li.Started); d < o.steadyState {
			t.Errorf("level %d lasted %v, want ≥ the %v steady state", li.Level, d, o.steadyState)
		}
	}
	a, err := analyze.Analyze(context.Background(), []string{o.Output}, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range a.Runs[0].Levels {
		t.Logf("c=%d: %d completions in a %.2f s window, E2E p50 %.3f s", lv.Concurrency, lv.WindowCompletions, lv.WindowS, *lv.E2E.P50)
		if !lv.Valid {
			t.Errorf("default-sized level c=%d is invalid: %s", lv.Concurrency, lv.InvalidReason)
		}
	}
}
