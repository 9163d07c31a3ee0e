package analyze

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// Issue 18 item 9: physically impossible rows were accepted (negative token
// counts gave negative tok/s; negative or oversized gaps, a first token before
// the send, gaps summing past the request's life, concurrency ≤ 0, an infinite
// rate, a row disagreeing with its level). Each is excluded and counted in a
// warning naming the level; a level impossible as a whole is refused.
func TestImpossibleRowsExcluded(t *testing.T) {
	info, rows := flipRows() // levels at concurrency 1, 2, 4; 12 rows each
	neg := int32(-400)
	bad := map[int]func(r *trace.Row){
		0:  func(r *trace.Row) { r.OutputTokens = &neg },
		1:  func(r *trace.Row) { ft := r.SentNs - 1e6; r.FirstTokenNs = &ft },
		2:  func(r *trace.Row) { r.ChunkGapsUs = append([]int32{-5}, r.ChunkGapsUs[1:]...) },
		3:  func(r *trace.Row) { r.ChunkGapsUs = append([]int32{2_000_000_000}, r.ChunkGapsUs[1:]...) },
		12: func(r *trace.Row) { r.Concurrency = 0 },
		13: func(r *trace.Row) { r.Rate = math.Inf(1) },
		16: func(r *trace.Row) { r.Concurrency = 7 }, // not the concurrency of the level's other rows
	}
	for i, f := range bad {
		f(&rows[i])
	}
	path := filepath.Join(t.TempDir(), "run.parquet")
	if err := trace.WriteFile(path, info, rows); err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(context.Background(), []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	warn := strings.Join(r.Warnings, "\n")
	for _, w := range []string{"level 0: 4 rows excluded for impossible values", "level 1: 3 rows excluded for impossible values"} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings do not say %q:\n%s", w, warn)
		}
	}
	for _, l := range r.Levels {
		if l.OutputTokS < 0 || math.IsNaN(l.OutputTokS) || math.IsInf(l.OutputTokS, 0) {
			t.Errorf("level %d: output %g tok/s", l.Level, l.OutputTokS)
		}
		if want := map[int]int{0: 8, 1: 9, 2: 12}[l.Level]; l.Requests != want {
			t.Errorf("level %d: %d requests counted, want %d (the impossible ones excluded)", l.Level, l.Requests, want)
		}
	}

	// A level all of whose rows are impossible is refused, naming it.
	info, rows = flipRows()
	for i := 24; i < 36; i++ {
		rows[i].EndNs = rows[i].SentNs - 1
	}
	if err := trace.WriteFile(path, info, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := Analyze(context.Background(), []string{path}, Options{}); err == nil || !strings.Contains(err.Error(), "level 2") || !strings.Contains(err.Error(), "impossible") {
		t.Errorf("a level of impossible rows: %v, want an error naming level 2", err)
	}
}

// TestLevelsDisagreeingWithThePlan (issue 18, item 9): a level whose rows say a
// concurrency its plan and its level record do not give it is shown, marked
// invalid, named in a warning, and makes no ceiling; a level past the plan's end
// likewise. A plan that agrees raises nothing.
func TestLevelsDisagreeingWithThePlan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(info *trace.RunInfo, rows []trace.Row)
		level int
		want  string // "" = no disagreement
	}{
		{"agrees", func(*trace.RunInfo, []trace.Row) {}, -1, ""},
		{"rows relabelled", func(_ *trace.RunInfo, rows []trace.Row) {
			for i := 24; i < 36; i++ {
				rows[i].Concurrency = 3
			}
		}, 2, "the run's plan gives level 2 c=4, its rows say c=3"},
		{"record relabelled", func(info *trace.RunInfo, _ []trace.Row) { info.Levels[1].Concurrency = 8 }, 1,
			"its rows say c=2, its record in the run info c=8"},
		{"past the plan", func(info *trace.RunInfo, _ []trace.Row) { info.Plan.Concurrency = []int{1, 2} }, 2,
			"the run's plan has 2 levels, and this is level 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, rows := flipRows()
			tc.edit(&info, rows)
			path := filepath.Join(t.TempDir(), "run.parquet")
			if err := trace.WriteFile(path, info, rows); err != nil {
				t.Fatal(err)
			}
			a, err := Analyze(context.Background(), []string{path}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := a.Runs[0]
			warn := strings.Join(r.Warnings, "\n")
			if tc.want == "" {
				if strings.Contains(warn, "disagrees with the run's plan") {
					t.Errorf("a trace that agrees with its plan warned:\n%s", warn)
				}
				return
			}
			l := r.Levels[tc.level]
			if l.Valid || !strings.Contains(l.InvalidReason, tc.want) {
				t.Errorf("level %d: valid %v, reason %q; want invalid for %q", tc.level, l.Valid, l.InvalidReason, tc.want)
			}
			if !strings.Contains(warn, fmt.Sprintf("level %d (concurrency %d) disagrees with the run's plan", tc.level, l.Concurrency)) || !strings.Contains(warn, tc.want) {
				t.Errorf("warnings lack %q for level %d:\n%s", tc.want, tc.level, warn)
			}
			if c := r.Ceiling.Concurrency; c != nil && *c >= float64(l.Concurrency) && l.Concurrency >= 4 {
				t.Errorf("ceiling %g from the disagreeing level c=%d", *c, l.Concurrency)
			}
		})
	}
}
