package analyze

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/trace"
)

// planDisagreementReason begins a level's invalid_reason when it disagrees with
// its plan.
const planDisagreementReason = "the level disagrees with the run's plan: "

// planDisagreement says how level lv disagrees with the sweep its recording planned
// ("" = it agrees, or the plan does not say): a level must run at the concurrency
// (or rate) the plan gives its index, and at the one its own level record holds. A
// level that does not (a flipped bit in a trace without checksums, a hand-edited
// file, parts of two runs put together) is labelled with a load it may never have
// had, so it makes no ceiling. meta is the level's record in the run info (nil:
// none). Searches and replays choose their levels as they go; only a fixed list of
// levels is checked against the plan.
func planDisagreement(plan trace.Plan, lv Level, meta *levelMeta) string {
	var why []string
	if meta != nil && (meta.Concurrency != lv.Concurrency || meta.Rate != lv.Rate) {
		why = append(why, fmt.Sprintf("its rows say %s, its record in the run info %s",
			offeredLabel(lv), offeredLabel(Level{Concurrency: meta.Concurrency, Rate: meta.Rate})))
	}
	if want, ok := plannedAt(plan, lv.Level); ok && (want.Concurrency != lv.Concurrency && want.Rate == 0 || want.Rate != lv.Rate) {
		why = append(why, fmt.Sprintf("the run's plan gives level %d %s, its rows say %s", lv.Level, offeredLabel(want), offeredLabel(lv)))
	} else if !ok && planFixed(plan) {
		why = append(why, fmt.Sprintf("the run's plan has %d levels, and this is level %d", plannedLevels(plan), lv.Level))
	}
	return strings.Join(why, "; ")
}

// planFixed says whether the plan is a fixed list of levels that the recorder runs
// in order (index i is point i ÷ repeats).
func planFixed(p trace.Plan) bool {
	return !p.Auto && p.Search == nil && p.Replay == "" && (len(p.Concurrency) > 0 || len(p.Rates) > 0)
}

func plannedLevels(p trace.Plan) int {
	return (len(p.Concurrency) + len(p.Rates)) * max(p.Repeat, 1)
}

// plannedAt is the load a fixed plan gives level index i, as the recorder's
// levelAt does (false: the plan is not fixed, or has no level i).
func plannedAt(p trace.Plan, i int) (Level, bool) {
	if !planFixed(p) || i < 0 {
		return Level{}, false
	}
	point := i / max(p.Repeat, 1)
	if len(p.Rates) > 0 {
		if point >= len(p.Rates) {
			return Level{}, false
		}
		return Level{Rate: p.Rates[point]}, true
	}
	if point >= len(p.Concurrency) {
		return Level{}, false
	}
	return Level{Concurrency: p.Concurrency[point]}, true
}
