package analyze

import (
	"context"
	"encoding/json"
	"testing"
)

// TestResamplesAreTheIntervals checks the hook compare reads: a level's
// resamples are the values its confidence intervals are drawn from (the latency
// intervals their percentiles exactly, the window intervals widened at most to
// hold the level's own figure), E2E is resampled as well, and a level decoded
// from JSON has none.
func TestResamplesAreTheIntervals(t *testing.T) {
	p := knownProcess{workers: 8, perWorker: 40, tokens: 24}
	path := writeTrace(t, t.TempDir(), "run.parquet", knownProcessInfo(p.workers), p.rows(1))
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	lv := &a.Runs[0].Levels[0]
	rs := lv.Resamples()
	if rs == nil || lv.CI == nil {
		t.Fatalf("no resamples (%v) or no CI (%v)", rs, lv.CI)
	}
	for _, c := range []struct {
		name string
		v    []float64
		ci   *Interval
		// exact: the CI is the resamples' percentile interval itself; else it
		// may be widened to hold the level's figure.
		exact bool
	}{
		{"output tok/s", rs.OutputTokS, lv.CI.OutputTokS, false},
		{"request/s", rs.RequestS, lv.CI.RequestS, false},
		{"TTFT p50", rs.TTFTP50, lv.CI.TTFTP50, true},
		{"TTFT p99", rs.TTFTP99, lv.CI.TTFTP99, true},
		{"TPOT p50", rs.TPOTP50, lv.CI.TPOTP50, true},
		{"TPOT p99", rs.TPOTP99, lv.CI.TPOTP99, true},
	} {
		if len(c.v) != defaultResamples || c.ci == nil {
			t.Errorf("%s: %d resamples, CI %v", c.name, len(c.v), c.ci)
			continue
		}
		iv := interval(append([]float64(nil), c.v...))
		if c.exact && iv != *c.ci {
			t.Errorf("%s: resamples' interval %v, the level's CI %v", c.name, iv, *c.ci)
		}
		if !c.exact && (iv.Low < c.ci.Low || iv.High > c.ci.High) {
			t.Errorf("%s: resamples' interval %v not inside the level's CI %v", c.name, iv, *c.ci)
		}
	}
	if len(rs.E2EP50) != defaultResamples || len(rs.E2EP99) != defaultResamples {
		t.Errorf("E2E resamples: %d p50, %d p99, want %d each", len(rs.E2EP50), len(rs.E2EP99), defaultResamples)
	}
	iv := interval(append([]float64(nil), rs.E2EP50...))
	if e := *lv.E2E.P50; e < iv.Low || e > iv.High {
		t.Errorf("E2E p50 %g outside its resamples' interval %v", e, iv)
	}
	// A copy: changing it does not change the level's intervals.
	rs.TTFTP50[0] = -1
	if lv.Resamples().TTFTP50[0] == -1 {
		t.Error("Resamples returned the level's own slice")
	}

	b, err := json.Marshal(lv)
	if err != nil {
		t.Fatal(err)
	}
	var back Level
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Resamples() != nil {
		t.Error("a level decoded from JSON has resamples")
	}
}
