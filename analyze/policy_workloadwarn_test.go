package analyze

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// workloadTrace is a three-level closed-loop run (c=1, 2, 4) of 40 requests per
// level with lognormal-ish prompt lengths from one sequence of draws (common
// random numbers); edit changes a level's rows.
func workloadTrace(t *testing.T, plan trace.Plan, edit func(level int32, r *trace.Row)) *Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	draws := make([]int32, 40)
	for i := range draws {
		draws[i] = int32(100 + rng.IntN(200))
	}
	var rows []trace.Row
	id := int64(0)
	for lv, c := range []int32{1, 2, 4} {
		for i := range 40 {
			w := int32(i) % c
			sent := float64(lv*10000 + (i/int(c))*100)
			r := engineRow(int32(lv), c, w, id, sent, 20, gaps(4, 10000), 5)
			r.PromptTokens = i32(draws[i])
			r.TargetPromptTokens = draws[i]
			if edit != nil {
				edit(int32(lv), &r)
			}
			rows = append(rows, r)
			id++
		}
	}
	info := knownInfo()
	info.Plan = plan
	info.Levels = []trace.LevelInfo{{Level: 0, Concurrency: 1}, {Level: 1, Concurrency: 2}, {Level: 2, Concurrency: 4}}
	path := writeTrace(t, t.TempDir(), "run.parquet", info, rows)
	a, err := Analyze(context.Background(), []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &a.Runs[0]
}

func TestWorkloadWarnings(t *testing.T) {
	unique := trace.Plan{Mode: "closed", Concurrency: []int{1, 2, 4}, PromptLengths: "lognormal:200,0.6", Seed: 7}
	shared := unique
	shared.SharedPrefixTokens = 100
	cached := func(share float64, level int32) func(int32, *trace.Row) {
		return func(lv int32, r *trace.Row) {
			if lv == level {
				r.CachedTokens = i32(int32(share * float64(*r.PromptTokens)))
			} else {
				r.CachedTokens = i32(2)
			}
		}
	}
	for _, tc := range []struct {
		name string
		plan trace.Plan
		edit func(int32, *trace.Row)
		n    int      // workload warnings
		want []string // substrings of them
	}{
		{"one workload, cold cache", unique, cached(0.02, 1), 0, nil},
		{"a level with longer prompts", unique, func(lv int32, r *trace.Row) {
			if lv == 2 {
				r.PromptTokens = i32(*r.PromptTokens * 2)
			}
		}, 1, []string{"level 2 (concurrency 4): mean prompt length"}},
		{"a level with shorter outputs", unique, func(lv int32, r *trace.Row) {
			if lv == 0 {
				r.OutputTokens = i32(2)
				r.ChunkGapsUs = gaps(1, 10000)
			}
		}, 1, []string{"level 0 (concurrency 1): mean output length"}},
		{"warm cache on unique prompts", unique, cached(0.99, 1), 1, []string{"level 1 (concurrency 2): the server served 98.7%", "seed 7", "without --seed"}},
		{"shared prefix hits by design", shared, cached(0.7, 1), 0, nil},
		{"with a shared prefix, the unique rest hits too", shared, cached(0.99, 1), 1, []string{"level 1 (concurrency 2): the server served"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := workloadTrace(t, tc.plan, tc.edit)
			var got []string
			for _, w := range r.Warnings {
				if strings.Contains(w, "prefix cache") || strings.Contains(w, "one workload") {
					got = append(got, w)
				}
			}
			if len(got) != tc.n {
				t.Fatalf("workload warnings %q, want %d containing %q", got, tc.n, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(got, "\n"), w) {
					t.Errorf("warnings %q lack %q", got, w)
				}
			}
		})
	}
}
