package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The workload as served, per level, beside what was asked: the KV ceiling counts
// the lengths the server reported (prompt_tokens, output_tokens), so a reviewer sees
// where they part from the plan (answers that stop before max_tokens, a tokenizer
// that counts a prompt differently, a conversation's growing history). For
// multi-turn runs, the turns of the level the key numbers describe: prompt length,
// prefix-cache hit share and TTFT by turn.

// shortOutput is the share of max_tokens under which the recorded output median is
// called out: answers that end early hold less KV than the plan assumed.
const shortOutput = 0.9

// lengthsTable is the per-level table of lengths asked and recorded; no rows when no
// level carries a workload object (an analysis from an older ceiling).
func lengthsTable(r *analyze.Run, ceil *analyze.Level) levelTable {
	t := levelTable{Header: []string{"Level", "Concurrency", "Requests", "Prompt asked", "Prompt recorded",
		"Output asked (max_tokens)", "Output recorded", "Prefix-cache hit"}}
	short := 0
	var shortAt *analyze.Level
	for i := range r.Levels {
		l := &r.Levels[i]
		w := l.Workload
		if w == nil {
			continue
		}
		hit := "—"
		if w.PrefixHitShare != nil {
			hit = fmt.Sprintf("%.0f%%", *w.PrefixHitShare*100)
		}
		t.Rows = append(t.Rows, levelRow{
			Ceiling: l == ceil && r.Ceiling.Concurrency != nil,
			Cells: []string{strconv.Itoa(l.Level), levelX(l), fmtInt(int64(w.Prompt.N)),
				p50p99(w.TargetPrompt), p50p99(w.Prompt), p50p99(w.MaxTokens), p50p99(w.Output), hit},
		})
		if asked, got := w.MaxTokens.P50, w.Output.P50; asked != nil && got != nil && *got < shortOutput**asked {
			short++
			if shortAt == nil {
				shortAt = l
			}
		}
	}
	if len(t.Rows) == 0 {
		return levelTable{}
	}
	t.Note = "Tokens, p50 · p99 over each level's successful measured requests: asked is what the workload requested (target prompt length, max_tokens), recorded is what the server counted; the KV ceiling uses the recorded lengths. Prefix-cache hit is the share of prompt tokens the server reported as cached."
	if shortAt != nil {
		w := shortAt.Workload
		t.Note += fmt.Sprintf(" At %d of %d levels the answers stopped well before max_tokens (from concurrency %s: median %s of %s asked), so each request held less KV than planned.",
			short, len(t.Rows), levelX(shortAt), fmtTokens(*w.Output.P50), fmtTokens(*w.MaxTokens.P50))
	}
	return t
}

// turnsTable is the per-turn table of the level the key numbers describe; no rows
// for a run without conversations.
func turnsTable(ceil *analyze.Level) levelTable {
	if ceil == nil || ceil.Workload == nil || len(ceil.Workload.Turns) == 0 {
		return levelTable{}
	}
	t := levelTable{Header: []string{"Turn", "Requests", "Prompt tokens p50 · p99", "Prefix-cache hit", "TTFT p50", "TTFT p99"}}
	for _, ts := range ceil.Workload.Turns {
		hit := "—"
		if ts.PrefixHitShare != nil {
			hit = fmt.Sprintf("%.0f%%", *ts.PrefixHitShare*100)
		}
		t.Rows = append(t.Rows, levelRow{Cells: []string{strconv.Itoa(ts.Turn), fmtInt(int64(ts.Requests)),
			p50p99(ts.PromptTokens), hit, fmtDurPtr(ts.TTFT.P50), fmtDurPtr(ts.TTFT.P99)}})
	}
	t.Note = fmt.Sprintf("Conversations at concurrency %s (the level the key numbers describe), by turn: each turn resends the history, so its prompt grows; the share the prefix cache served and the time to first token show what the cache saves.", levelX(ceil))
	return t
}

// p50p99 is "p50 · p99" of a length summary, "—" where it has no values.
func p50p99(s analyze.Summary) string {
	if s.N == 0 || s.P50 == nil || s.P99 == nil {
		return "—"
	}
	return fmtTokens(*s.P50) + " · " + fmtTokens(*s.P99)
}

// fmtTokens is a token count, whole (a percentile of counts may fall between two).
func fmtTokens(v float64) string {
	if !finite(v) {
		return "—"
	}
	return fmtInt(int64(math.Round(v)))
}
