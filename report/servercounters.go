package report

// The server's own counters beside the client's figures, the three-way KV check and
// the list of invalid levels: what lets a reviewer check the verdict against the
// server.

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// serverTable is the evidence's per-level table: the client's in-flight and decode
// concurrency beside what the server's /metrics said in the same window. Empty when
// no level has server counters.
func serverTable(r *analyze.Run) levelTable {
	t := levelTable{Header: []string{"level", "offered", "valid", "client in flight", "client decoding",
		"server running mean / max", "server waiting mean / max", "KV usage mean / max", "preemptions"}}
	any := false
	for i := range r.Levels {
		l := &r.Levels[i]
		s := l.Server
		row := []string{fmt.Sprint(l.Level), offeredText(l), validText(l), fmtNum(l.InFlight), fmtNum(l.DecodeConcurrency)}
		if s == nil {
			row = append(row, "no scrape", "—", "—", "—") // its window was shorter than the scrape interval (analyze warns)
		} else {
			any = true
			row = append(row, pair(s.RunningMean, s.RunningMax, fmtPtr), pair(s.WaitingMean, s.WaitingMax, fmtPtr),
				pair(s.KVUsageMean, s.KVUsageMax, pctPtr), fmtPtr(s.Preemptions))
		}
		t.Rows = append(t.Rows, levelRow{Cells: row})
	}
	if !any {
		return levelTable{}
	}
	t.Note = "Client figures are time averages over each level's steady-state window (Little's law); server figures are the mean and maximum of the /metrics scrapes inside the same window, preemptions their count in it. A client in-flight count well above the server's running one is requests queued in the server."
	return t
}

func pair(a, b *float64, f func(*float64) string) string {
	if a == nil && b == nil {
		return "—"
	}
	return f(a) + " / " + f(b)
}

func pctPtr(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

func offeredText(l *analyze.Level) string {
	if l.Rate > 0 {
		return fmt.Sprintf("%g/s", l.Rate)
	}
	return fmt.Sprintf("c=%d", l.Concurrency)
}

func validText(l *analyze.Level) string {
	if l.Valid {
		return "yes"
	}
	return "no"
}

// kvCheckNotes are the capacity section's lines of the three-way KV check, one per
// run that has one: modelled, declared and observed, and whether they agree.
func kvCheckNotes(runs []analyze.Run, labels []string) []string {
	var out []string
	for i := range runs {
		k := runs[i].KVCheck
		if k == nil {
			continue
		}
		tok := func(v *int64) string {
			if v == nil {
				return "unknown"
			}
			return fmtInt(*v) + " tokens"
		}
		agree := "too few figures to compare"
		if k.Agree != nil {
			agree = fmt.Sprintf("they agree within %.0f%%", 100*k.Tolerance)
			if !*k.Agree {
				agree = fmt.Sprintf("they DISAGREE by more than %.0f%%", 100*k.Tolerance)
			}
		}
		s := fmt.Sprintf("KV capacity check: modelled %s · declared by the server %s · observed %s: %s. %s",
			tok(k.ModelledTokens), tok(k.DeclaredTokens), tok(k.ObservedTokens), agree, k.Verdict)
		if len(runs) > 1 {
			s = labels[i] + ": " + s
		}
		out = append(out, s)
	}
	return out
}

// invalidNotes list the invalid levels and why, for the sections whose charts draw
// them hollow and grey.
func invalidNotes(runs []analyze.Run, labels []string) []string {
	var out []string
	for i := range runs {
		var parts []string
		for j := range runs[i].Levels {
			l := &runs[i].Levels[j]
			if !l.Valid {
				parts = append(parts, fmt.Sprintf("level %d (%s): %s", l.Level, offeredText(l), l.InvalidReason))
			}
		}
		if len(parts) == 0 {
			continue
		}
		s := "Invalid levels (hollow grey markers; excluded from the ceilings and fits): " + strings.Join(parts, "; ") + "."
		if len(runs) > 1 {
			s = labels[i] + ": " + s
		}
		out = append(out, s)
	}
	return out
}
