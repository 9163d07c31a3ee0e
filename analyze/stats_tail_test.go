package analyze

import (
	"context"
	"math"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

func TestTailNeed(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		need int
		name string
	}{{99.9, 1000, "p99.9"}, {99, 100, "p99"}, {95, 20, "p95"}, {50, 2, "p50"}, {99.99, 10000, "p99.99"}, {97.5, 40, "p97.5"}} {
		if got := TailNeed(tc.p); got != tc.need {
			t.Errorf("TailNeed(%g) = %d, want %d", tc.p, got, tc.need)
		}
		if got := PercentileName(tc.p); got != tc.name {
			t.Errorf("PercentileName(%g) = %q, want %q", tc.p, got, tc.name)
		}
	}
}

// TestTailGuard: p99.9 of 999 values is no number, with the note saying why; of
// 1,000 it is the interpolated order statistic, the same from the sorted values,
// the seconds and the pooled gaps.
func TestTailGuard(t *testing.T) {
	for _, n := range []int{240, 999, 1000, 2001} {
		ns := make([]int64, n)
		secs := make([]float64, n)
		var h gapHist
		gaps := make([]int32, n)
		for i := range n {
			ns[i] = int64(i+1) * 1000 // 1 µs .. n µs
			secs[i] = float64(i+1) * 1e-6
			gaps[i] = int32(i + 1)
		}
		h.addAll(gaps)
		want := float64(n-1)*0.999 + 1 // the interpolated rank, in µs
		for name, got := range map[string][]TailPercentile{
			"ns": tailNs(ns, []float64{99.9}, "requests"), "s": tailFloat(secs, []float64{99.9}, "requests"), "gaps": h.tail([]float64{99.9}),
		} {
			tp := got[0]
			if n < 1000 {
				if tp.Value != nil || tp.Note == "" || tp.Need != 1000 || tp.N != n {
					t.Errorf("%s n=%d: %+v, want no value and a note", name, n, tp)
				}
				continue
			}
			if tp.Value == nil || math.Abs(*tp.Value*1e6-want) > 1e-6 || tp.Note != "" {
				t.Errorf("%s n=%d: %+v, want %g µs", name, n, tp, want)
			}
		}
	}
	if got := tailNs(make([]int64, 240), []float64{99.9}, "requests")[0].Note; got != "p99.9 needs ≥ 1,000 requests; this level has 240" {
		t.Errorf("note %q", got)
	}
}

func TestTailPercentilesAsked(t *testing.T) {
	got := tailPercentiles([]float64{99, 97.5, 99.9, 0, 100, 99.99})
	want := []float64{97.5, 99.9, 99.99}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
	s := Summary{N: 50, P95: ptr(1.0), Tail: []TailPercentile{{P: 97.5, Value: ptr(2.0)}}}
	if v, _ := s.TailValue(95); v == nil || *v != 1 {
		t.Errorf("p95 %v", v)
	}
	if v, _ := s.TailValue(97.5); v == nil || *v != 2 {
		t.Errorf("p97.5 %v", v)
	}
	if v, note := s.TailValue(99.9); v != nil || note == "" {
		t.Errorf("p99.9 not computed: %v %q", v, note)
	}
}

// TestCoordinatedOmission: in open loop a request sent late (the client fell behind
// its schedule) has its latency from the scheduled send beside the one from the
// actual send; in closed loop there is none.
func TestCoordinatedOmission(t *testing.T) {
	var rows []trace.Row
	for i := range 20 {
		sched := float64(i) * 100
		r := engineRow(0, 0, 0, int64(i), sched, 50, gaps(4, 10000), 5)
		r.Concurrency, r.Rate = 0, 10
		if i == 10 {
			// Sent 400 ms after its scheduled time.
			r = engineRow(0, 0, 0, int64(i), sched+400, 50, gaps(4, 10000), 5)
			r.Concurrency, r.Rate, r.ScheduledNs = 0, 10, ms(sched)
		}
		rows = append(rows, r)
	}
	info := knownInfo()
	info.Plan = trace.Plan{Mode: "open", Rates: []float64{10}}
	info.Levels = []trace.LevelInfo{{Level: 0, Rate: 10}}
	path := writeTrace(t, t.TempDir(), "open.parquet", info, rows)
	a, err := Analyze(context.Background(), []string{path}, Options{Resamples: -1, TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := a.Runs[0].Levels[0]
	if l.TTFTFromScheduled == nil || l.E2EFromScheduled == nil {
		t.Fatal("no latencies from the scheduled send in open loop")
	}
	// From the send every TTFT is 50 ms; from the schedule one is 450 ms.
	nearP(t, "TTFT max from sent", l.TTFT.P99, 0.05, 1e-9)
	if p := l.TTFTFromScheduled.P99; p == nil || *p < 0.3 {
		t.Errorf("TTFT p99 from scheduled %v: the late send is hidden", p)
	}
	nearP(t, "TTFT p50 from scheduled", l.TTFTFromScheduled.P50, 0.05, 1e-9)

	closed := writeTrace(t, t.TempDir(), "closed.parquet", knownInfo(), knownRows())
	a, err = Analyze(context.Background(), []string{closed}, Options{Resamples: -1, TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Runs[0].Levels[0].TTFTFromScheduled != nil {
		t.Errorf("closed loop has latencies from the scheduled send")
	}
}
