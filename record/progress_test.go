package record

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

func TestQuantile(t *testing.T) {
	v := []float64{4, 1, 3, 2} // unsorted on purpose
	for _, tt := range []struct{ q, want float64 }{
		{0, 1}, {0.5, 2.5}, {1, 4}, {0.99, 3.97}, {0.25, 1.75},
	} {
		if got := quantile(v, tt.q); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("quantile(%v, %v) = %v, want %v (numpy's linear)", v, tt.q, got, tt.want)
		}
	}
	if v[0] != 4 {
		t.Error("quantile sorted its input in place")
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("quantile of nothing is not 0")
	}
}

func TestProgressLine(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	n := func(v int32) *int32 { return &v }
	boom := "boom"
	s := newLevelStats(level{index: 2, concurrency: 8}, 4, 6, nil, false)
	s.add(&trace.Row{Warmup: true, SentNs: 0, EndNs: 5e9, OutputTokens: n(1000)})
	s.add(&trace.Row{SentNs: 1e9, FirstTokenNs: p(1.2e9), EndNs: 2e9, OutputTokens: n(100)})
	s.add(&trace.Row{SentNs: 1e9, FirstTokenNs: p(1.4e9), EndNs: 3e9, OutputTokens: n(300)})
	s.add(&trace.Row{SentNs: 1e9, EndNs: 1e9, Error: &boom})
	want := "level 3/6  c=8  4/4 req  200.0 tok/s  p50 TTFT 0.30s  1 errors"
	if got := s.lineLocked(); got != want {
		t.Errorf("progress line\n  %s\nwant\n  %s", got, want)
	}
	if s.measured != 3 || s.errors != 1 {
		t.Errorf("measured %d, errors %d; want 3 and 1 (the warm-up left out)", s.measured, s.errors)
	}
	open := newLevelStats(level{index: 0, rate: 2.5}, 0, 0, nil, false)
	if got := open.lineLocked(); !strings.HasPrefix(got, "level 1  rate=2.5/s  0 req") || !strings.Contains(got, "p50 TTFT -") {
		t.Errorf("open-loop line before any request: %q", got)
	}
}
