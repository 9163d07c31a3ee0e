package report

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The lengths table puts each level's recorded lengths beside those asked, calls out
// answers that stop well before max_tokens, and is absent for an analysis without
// workload objects; the turns table shows the key level's conversations by turn.
func TestWorkloadTables(t *testing.T) {
	a := fixture(10, 500)
	r := &a.Runs[0]
	ceil, _ := keyLevels(r)
	lt := lengthsTable(r, ceil)
	if len(lt.Rows) != 10 {
		t.Fatalf("%d rows, want one per level", len(lt.Rows))
	}
	row := lt.Rows[0].Cells
	// summary(n, p50) puts p99 at 2.6 × p50.
	for i, want := range map[int]string{3: "1,024 · 2,662", 4: "1,031 · 2,681", 5: "256 · 256", 6: "256 · 666", 7: "42%"} {
		if row[i] != want {
			t.Errorf("level 0 column %q = %q, want %q", lt.Header[i], row[i], want)
		}
	}
	if got := lt.Rows[9].Cells[6]; got != "180 · 468" {
		t.Errorf("level 9 output recorded %q, want 180 · 468", got)
	}
	if !strings.Contains(lt.Note, "At 4 of 10 levels the answers stopped well before max_tokens (from concurrency 64: median 180 of 256 asked)") {
		t.Errorf("note does not call out the short answers: %s", lt.Note)
	}
	marked := 0
	for _, row := range lt.Rows {
		if row.Ceiling {
			marked++
		}
	}
	if marked != 1 || !lt.Rows[ceil.Level].Ceiling {
		t.Errorf("%d rows marked, want the key level %d only", marked, ceil.Level)
	}

	tt := turnsTable(ceil)
	if len(tt.Rows) != 3 || tt.Rows[2].Cells[3] != "60%" || tt.Rows[0].Cells[0] != "1" {
		t.Errorf("turns table %+v", tt.Rows)
	}
	if !strings.Contains(tt.Note, "concurrency "+levelX(ceil)) {
		t.Errorf("turns note does not name the level: %s", tt.Note)
	}

	// No workload objects (an older analysis) and no turns: no tables, no false note.
	old := fixture(3, 10)
	for i := range old.Runs[0].Levels {
		old.Runs[0].Levels[i].Workload = nil
	}
	if lt := lengthsTable(&old.Runs[0], nil); len(lt.Rows) != 0 || lt.Note != "" {
		t.Errorf("without workloads: %+v", lt)
	}
	one := &analyze.Level{Concurrency: 4, Workload: &analyze.Workload{Prompt: analyze.Summary{N: 0}}}
	if tt := turnsTable(one); len(tt.Rows) != 0 {
		t.Errorf("without turns: %+v", tt)
	}
	if got := p50p99(analyze.Summary{N: 0}); got != "—" {
		t.Errorf("empty summary %q", got)
	}
}

// The summary's workload line gives the lengths as asked: a distribution in the
// flag's syntax, conversations, distinct prefixes and bursty arrivals.
func TestWorkloadLineShapes(t *testing.T) {
	cases := []struct {
		name, plan string
		want       []string
	}{
		{"fixed", `{"concurrency":[1,2],"prompt_tokens":256,"output_tokens":128}`, []string{"256 prompt → 128 output tokens"}},
		{"distribution", `{"concurrency":[1,2],"prompt_tokens":2000,"output_tokens":256,"prompt_lengths":"lognormal:2000,0.6"}`, []string{"lognormal:2000,0.6 prompt → 256 output tokens"}},
		{"conversations", `{"concurrency":[4],"prompt_tokens":300,"output_tokens":200,"turns":5,"shared_prefix_tokens":1000,"prefixes":4}`,
			[]string{"300 prompt → 200 output tokens (1,000 shared prefix, 4 distinct)", "5-turn conversations"}},
		{"gamma", `{"mode":"open","rates":[2],"prompt_tokens":300,"output_tokens":200,"burstiness":0.5}`, []string{"gamma arrivals (burstiness 0.5)"}},
		{"replay", `{"mode":"open","rates":[1],"replay":"prod.jsonl","prompt_tokens":300}`, []string{"replay of prod.jsonl"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &analyze.Run{Info: []byte(`{"plan":` + tc.plan + `}`)}
			line := workloadLine(r, readInfo(r))
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
		})
	}
}
