package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// seriesPoints is the [x, y] points of every series of the chart named by id, by
// series name (several series of one name are joined).
func seriesPoints(t *testing.T, specs []chartSpec, id string) map[string][][]any {
	t.Helper()
	for _, s := range specs {
		if s.ID != id {
			continue
		}
		var opt struct {
			Series []struct {
				Name string `json:"name"`
				Data []any  `json:"data"`
			} `json:"series"`
		}
		if err := json.Unmarshal(s.Option, &opt); err != nil {
			t.Fatalf("chart %s: %v", id, err)
		}
		out := map[string][][]any{}
		for _, se := range opt.Series {
			for _, d := range se.Data {
				if p, ok := d.([]any); ok {
					out[se.Name] = append(out[se.Name], p)
				}
			}
		}
		return out
	}
	t.Fatalf("no chart %s", id)
	return nil
}

// hasX reports whether a point at x is among ps.
func hasX(ps [][]any, x float64) bool {
	for _, p := range ps {
		if v, ok := p[0].(float64); ok && v == x {
			return true
		}
	}
	return false
}

// TestNoLineThroughInvalidLevels: the throughput and latency lines join valid
// levels only. An invalid level with completions is a hollow marker beside the
// line; a level where every request failed (0 tok/s, no latency) is not plotted
// at all, neither on the line nor as a marker at 0 (issue 27: a failed c=8 level
// drawn at 0 tok/s made the line fall through the KV marker), nor its interval as
// a bar at 0–0 (issue 27: "—" for a level with no completions).
func TestNoLineThroughInvalidLevels(t *testing.T) {
	a := fixture(6, 60) // concurrency 1, 2, 4, 8, 16, 32
	r := &a.Runs[0]
	failed, short := &r.Levels[3], &r.Levels[4] // c=8 failed outright; c=16 invalid with completions
	failed.Valid, failed.InvalidReason = false, "every request failed"
	failed.Errors, failed.OutputTokS, failed.WindowCompletions = failed.Requests, 0, 0
	failed.TTFT, failed.E2E, failed.TPOT = analyze.Summary{}, analyze.Summary{}, analyze.Summary{}
	// An analysis from before intervals of empty levels were dropped: 0–0.
	failed.CI = &analyze.LevelCI{OutputTokS: &analyze.Interval{}, RequestS: &analyze.Interval{}}
	short.Valid, short.InvalidReason = false, "window too short"

	b := &chartBuilder{}
	ax := sweepAxis(a.Runs)
	labels := []string{"run"}
	tp := throughputChart(b, a.Runs, labels, ax)
	lat := latencyChart(b, a.Runs, labels, ax, "Time to first token", "TTFT (s)", "s", 1,
		func(l *analyze.Level) analyze.Summary { return l.TTFT }, func(s analyze.SLO) *float64 { return s.TTFT })
	// Interactivity vs throughput: the failed level is no point at (0, 0).
	pu := perUserChart(b, a.Runs, labels)
	for _, s := range b.specs {
		if s.ID == pu.ID && strings.Contains(string(s.Option), `,"8"]`) {
			t.Errorf("the interactivity chart plots the level without a completion (8): %s", s.Option)
		}
	}
	for _, c := range []struct {
		id    string
		lines []string
	}{{tp.ID, []string{"measured"}}, {lat.ID, []string{"p50", "p99"}}} {
		series := seriesPoints(t, b.specs, c.id)
		for _, line := range c.lines {
			ps := series[line]
			if len(ps) != 4 {
				t.Errorf("chart %s: line %q has %d points %v; want the 4 valid levels", c.id, line, len(ps), ps)
			}
			for _, x := range []float64{8, 16} {
				if hasX(ps, x) {
					t.Errorf("chart %s: line %q runs through the invalid level at %g", c.id, line, x)
				}
			}
		}
		marks := series["invalid level"]
		if !hasX(marks, 16) {
			t.Errorf("chart %s: the invalid level with completions (16) is not marked: %v", c.id, marks)
		}
		for name, ps := range series {
			if hasX(ps, 8) {
				t.Errorf("chart %s: series %q plots the level without a completion (8): %v", c.id, name, ps)
			}
		}
	}
}
