package shard

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// gen is a generator of one closed-loop level at concurrency c whose rows were
// sent at sent (ns) and lasted 1 s, with output lengths outs.
func gen(name string, c int, timing string, sent []int64, outs []int32) Generator {
	g := Generator{Name: name, Info: trace.RunInfo{Source: &trace.SourceInfo{Tool: "aiperf", Files: []string{name}},
		Target: trace.Target{Model: "m"},
		Levels: []trace.LevelInfo{{Level: 0, Concurrency: c, Timing: timing, SourceDurationS: 10}}}}
	for i, s := range sent {
		out := outs[i%len(outs)]
		g.Rows = append(g.Rows, trace.Row{Level: 0, RequestID: int64(i + 1), SentNs: s, EndNs: s + 1e9, Concurrency: int32(c), OutputTokens: &out})
	}
	return g
}

func TestMergeGeneratorsChecks(t *testing.T) {
	const epoch = int64(1759522419154829652) // AIPerf's first record, 2025-10-03
	spread := func(base int64, n int) []int64 {
		var s []int64
		for i := range n {
			s = append(s, base+int64(i)*1e8)
		}
		return s
	}
	for _, c := range []struct {
		name      string
		gens      []Generator
		err       string // "" when the merge must succeed
		finding   string // a finding the merge must make ("" none)
		noFinding bool
	}{
		{"absolute, together", []Generator{gen("a", 2, "", spread(epoch, 40), []int32{100}), gen("b", 2, "", spread(epoch+2e8, 40), []int32{100})},
			"", "", true},
		{"absolute, b 3 s late", []Generator{gen("a", 2, "", spread(epoch, 40), []int32{100}), gen("b", 2, "", spread(epoch+3e9, 40), []int32{100})},
			"", "level 0: generator 1 (b) started 3.0 s after the first generator", false},
		{"offsets", []Generator{gen("a", 2, "", spread(0, 40), []int32{100}), gen("b", 2, "", spread(0, 40), []int32{100})},
			"", "co-loading could not be verified: the aiperf files hold send times only as offsets", false},
		{"relative", []Generator{gen("a", 2, "relative", make([]int64, 10), []int32{100}), gen("b", 2, "relative", make([]int64, 10), []int32{100})},
			"", "co-loading could not be verified: the aiperf files hold no send times", false},
		{"absolute and offsets", []Generator{gen("a", 2, "", spread(epoch, 10), []int32{100}), gen("b", 2, "", spread(0, 10), []int32{100})},
			"b has send times as offsets from its own start but a has absolute send times", "", false},
		// Outputs that stop at the end of sentence: means 10% apart by chance.
		{"noisy outputs, one workload", []Generator{gen("a", 2, "", spread(epoch, 40), []int32{50, 1000}), gen("b", 2, "", spread(epoch, 40), []int32{50, 1000, 50, 1000, 1000})},
			"", "", true},
		{"another workload", []Generator{gen("a", 2, "", spread(epoch, 40), []int32{512}), gen("b", 2, "", spread(epoch, 40), []int32{128})},
			"b has mean output tokens 128 but a has 512", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := MergeGenerators(c.gens)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, g := range c.gens {
				want += g.Info.Levels[0].Concurrency
			}
			if got := m.Info.Levels[0].Concurrency; got != want {
				t.Errorf("merged concurrency %d, want the sum %d", got, want)
			}
			text := strings.Join(m.Info.Warnings, "\n")
			if c.finding != "" && !strings.Contains(text, "merge: "+c.finding) {
				t.Errorf("warnings do not say %q:\n%s", c.finding, text)
			}
			if c.noFinding && len(m.Findings) > 0 {
				t.Errorf("findings %v, want none", m.Findings)
			}
		})
	}
}
