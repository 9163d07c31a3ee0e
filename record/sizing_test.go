package record

import (
	"context"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

func TestLevelSizerRule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	s := newLevelSizer(2, t0, time.Minute)
	s.steady = 10 * time.Second
	// Worker 0 completes 4 quickly; worker 1 starts at 1 s.
	for i := range 4 {
		s.observe(&trace.Row{Worker: 0, SentNs: at(time.Duration(i) * time.Second)})
	}
	s.observe(&trace.Row{Worker: 1, SentNs: at(time.Second), Warmup: true}) // warm-up does not count
	if s.enough(t0.Add(30 * time.Second)) {
		t.Fatal("enough before worker 1 completed anything")
	}
	for i := range 3 {
		s.observe(&trace.Row{Worker: 1, SentNs: at(time.Duration(i+1) * time.Second)})
	}
	if s.enough(t0.Add(30 * time.Second)) {
		t.Fatal("enough with worker 1 at 3 of 4 requests")
	}
	s.observe(&trace.Row{Worker: 1, SentNs: at(5 * time.Second)})
	if s.enough(t0.Add(10 * time.Second)) {
		t.Fatal("enough 9 s into a 10 s steady state (it began at 1 s, worker 1's first send)")
	}
	if !s.enough(t0.Add(11 * time.Second)) {
		t.Fatal("not enough after 4 requests per worker and 10 s of steady state")
	}
	// The cap stops a level that never satisfies the rule.
	c := newLevelSizer(8, t0, time.Minute)
	if c.enough(t0.Add(59*time.Second)) || !c.enough(t0.Add(time.Minute)) {
		t.Error("the cap does not stop the level at --max-level-duration")
	}
}

// TestRecordDefaultLevelSize records without a count or duration: every worker of
// every level completes at least 4 measured requests, and the steady state (a short
// one for the test) is reached.
func TestRecordDefaultLevelSize(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 2 * time.Millisecond, TokenGap: time.Millisecond, Slots: 4})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.RequestsPerLevel = 0
	o.Concurrency = []int{1, 8}
	o.steadyState = 300 * time.Millisecond
	o.MetricsURL = "off"
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := readTrace(t, o.Output)
	per := map[[2]int32]int{}
	for _, r := range rows {
		per[[2]int32{r.Level, r.Worker}]++
	}
	for lvl, c := range map[int32]int32{0: 1, 1: 8} {
		for w := range c {
			if n := per[[2]int32{lvl, w}]; n < sizeRequestsPerWorker {
				t.Errorf("level %d worker %d completed %d requests, want ≥ %d", lvl, w, n, sizeRequestsPerWorker)
			}
		}
		// The rule counts the steady state from the level's start, as the run info
		// records it (the first send comes a little after it).
		li := info.Levels[lvl]
		if d := li.Ended.Sub(li.Started); d < o.steadyState {
			t.Errorf("level %d lasted %v, want ≥ the %v steady state", lvl, d, o.steadyState)
		}
	}
}
