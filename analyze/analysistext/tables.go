package analysistext

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The per-level tables of what the server said: the failures by kind and message,
// its counters beside the client's in-flight figure, the GPUs' power and energy.

// errorTable is the failures of every level by kind and message; nil when nothing
// failed.
func errorTable(r *analyze.Run) *table {
	t := &table{head: []string{"level", "offered", "kind", "failed", "message (first seen)"}}
	for _, l := range r.Levels {
		for _, g := range l.ErrorGroups {
			t.rows = append(t.rows, []string{fmt.Sprint(l.Level), offeredLabel(l), g.Kind, fmt.Sprint(g.Count), g.Message})
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// serverTable is the per-level table of the server's counters beside the client's
// in-flight figure, for the text and markdown outputs; nil when no level has any.
func serverTable(r *analyze.Run) *table {
	t := &table{head: []string{"level", "offered", "client in flight", "server running", "max", "waiting", "max",
		"KV mean", "KV max", "preempt", "prefix hit", "server tok/s"}}
	found := false
	for _, l := range r.Levels {
		s := l.Server
		if s == nil {
			// No scrape inside its window (analyze warns): the row stays, empty.
			row := []string{fmt.Sprint(l.Level), offeredLabel(l), numCell(l.InFlight, 2), "no scrape"}
			for len(row) < len(t.head) {
				row = append(row, "—")
			}
			t.rows = append(t.rows, row)
			continue
		}
		found = true
		t.rows = append(t.rows, []string{fmt.Sprint(l.Level), offeredLabel(l), numCell(l.InFlight, 2),
			optCell(s.RunningMean, 2), optCell(s.RunningMax, 0), optCell(s.WaitingMean, 2), optCell(s.WaitingMax, 0),
			pct(s.KVUsageMean), pct(s.KVUsageMax), optCell(s.Preemptions, 0), pct(s.PrefixHitRate), optCell(s.GenerationTokS, 1)})
	}
	if !found {
		return nil
	}
	return t
}

// gpuTable is the per-level GPU table for the text and markdown outputs; nil when
// no level has GPU figures.
func gpuTable(r *analyze.Run) *table {
	t := &table{head: []string{"level", "offered", "GPUs", "W/GPU", "total W", "J/out tok", "J/request", "util %", "energy from"}}
	found := false
	for _, l := range r.Levels {
		g := l.GPU
		if g == nil {
			continue
		}
		found = true
		t.rows = append(t.rows, []string{fmt.Sprint(l.Level), offeredLabel(l), fmt.Sprint(g.GPUs), optCell(g.PowerPerGPUW, 0),
			optCell(g.TotalPowerW, 0), optCell(g.JPerOutputToken, 3), optCell(g.JPerRequest, 1), optCell(g.UtilPct, 0),
			strings.SplitN(g.EnergySource, ",", 2)[0]})
	}
	if !found {
		return nil
	}
	return t
}
