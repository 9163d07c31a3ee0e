package analyze

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/levelrule"
	"github.com/ceiling-llm/ceiling/trace"
)

// Level validity: a level counts towards the ceilings and fits only when it measured
// what it is labelled with. A sweep of too few requests per level (8 requests at
// concurrency 32, say) never has its workers all busy long enough, so its window is a
// fraction of a second and its "concurrency 32" throughput is that of a handful of
// requests. The rule is package levelrule's, the same the recorder sizes a default
// level by: enough requests in flight (or of the offered rate completed), enough
// completions inside the steady-state window, and a window of enough request
// lifetimes.

// checkValidity sets lv.Valid and lv.InvalidReason from levelrule's rule.
func checkValidity(lv *Level) {
	lv.InFlight = lv.DecodeConcurrency + lv.WaitingConcurrency
	lv.Valid, lv.InvalidReason = true, ""
	var reasons []string
	switch {
	case lv.Concurrency > 0:
		if !levelrule.InFlightOK(lv.InFlight, lv.Concurrency) {
			reasons = append(reasons, fmt.Sprintf("%.1f requests in flight on average of the %d targeted (%.0f%%)",
				lv.InFlight, lv.Concurrency, 100*lv.InFlight/float64(lv.Concurrency)))
		}
	case lv.Rate > 0:
		if !levelrule.RateOK(lv.RequestS, lv.Rate) {
			reasons = append(reasons, fmt.Sprintf("completed %.2f requests/s of the %g/s offered: the queue grew all level, so its concurrency is not a steady state",
				lv.RequestS, lv.Rate))
		}
	}
	if !levelrule.CompletionsOK(lv.WindowCompletions, lv.Concurrency) {
		reasons = append(reasons, fmt.Sprintf("%d completed inside the %s steady-state window (needs %d)",
			lv.WindowCompletions, fmtSeconds(lv.WindowS), levelrule.MinCompletions(lv.Concurrency)))
	}
	if p := lv.E2E.P50; p != nil && !levelrule.LengthOK(lv.WindowS, *p) {
		reasons = append(reasons, fmt.Sprintf("the window (%s) is shorter than %g request lifetimes (E2E p50 %s)",
			fmtSeconds(lv.WindowS), levelrule.MinWindowLifetimes, fmtSeconds(*p)))
	}
	if len(reasons) > 0 && lv.StopReason != "" {
		// The level ended early: its real cause, not a guess among the possible ones.
		reasons = append(reasons, "cut short: "+lv.StopReason)
	}
	if len(reasons) > 0 {
		lv.Valid = false
		lv.InvalidReason = strings.Join(reasons, "; ")
	}
}

// validLevels returns the levels that count towards the ceilings and fits.
func validLevels(levels []Level) []Level {
	out := make([]Level, 0, len(levels))
	for _, l := range levels {
		if l.Valid {
			out = append(out, l)
		}
	}
	return out
}

// How a run's levels were sized, for the validity warning's advice.
const (
	sizeUnknown  = iota // another tool's file, or no plan
	sizeExplicit        // --requests-per-level or --duration-per-level
	sizeDefault         // the recorder's default size (levelrule)
)

// planSizing says how the recorder sized the levels of a run with this plan (own:
// recorded by ceiling record, not imported).
func planSizing(p trace.Plan, own bool) int {
	switch {
	case !own || p.Mode == "":
		return sizeUnknown
	case p.RequestsPerLevel > 0 || p.DurationPerLevelS > 0:
		return sizeExplicit
	}
	return sizeDefault
}

// validityWarning is the one warning that counts the invalid levels and says what to
// rerun with; "" when every level is valid. The advice never sends the user back to
// what made the level invalid: an explicit size is fixed by the default size (which
// stops only once levelrule's rule holds); a default-sized level is invalid only when
// it hit --max-level-duration or the server kept fewer requests in flight than asked.
// An imported run (tool: the source tool, "" for ceiling's own traces) is advised in
// its own tool's flags.
func validityWarning(levels []Level, sizing int, tool string) string {
	var names, causes []string
	maxC := 0
	rate, short, flight := false, false, false
	for _, l := range levels {
		if l.Valid || strings.HasPrefix(l.InvalidReason, planDisagreementReason) {
			// A level that disagrees with its plan has its own warning; no
			// rerun of the right size mends it.
			continue
		}
		names = append(names, offeredLabel(l))
		maxC = max(maxC, l.Concurrency)
		rate = rate || (l.Rate > 0 && l.Concurrency == 0)
		flight = flight || (l.Concurrency > 0 && !levelrule.InFlightOK(l.InFlight, l.Concurrency))
		short = short || strings.Contains(l.InvalidReason, "completed inside") || strings.Contains(l.InvalidReason, "request lifetimes")
		if l.StopReason != "" {
			causes = append(causes, offeredLabel(l)+" "+l.StopReason)
		}
	}
	if len(names) == 0 {
		return ""
	}
	var fix []string
	switch sizing {
	case sizeExplicit:
		fix = append(fix, fmt.Sprintf("rerun them without --requests-per-level and --duration-per-level: the default size runs each level until its steady-state window holds at least %d completions (or the concurrency, if more) over at least %g request lifetimes and %s, the rule that judged them",
			levelrule.MinWindowCompletions, levelrule.MinWindowLifetimes, levelrule.SteadyState))
	case sizeDefault:
		switch {
		case len(causes) > 0:
			// The recorder stored why each level ended early: name that, not
			// every cause it might have been.
			fix = append(fix, "the default size stops a level only once this rule holds, so they were cut short: "+strings.Join(causes, "; ")+cutShortAdvice(causes))
		case short:
			fix = append(fix, "the trace stores no early stop for them (the recorder stores --max-level-duration, an interrupt or failures when one ends a level), so the recorder's own count judged the rule met where this analysis's window does not: rerun them")
		}
		if flight {
			fix = append(fix, "fewer requests were in flight than the level's concurrency: the server queued or refused them, or the client could not keep up; see the level's errors and the client's CPU")
		}
	default:
		if adv := sourceRerun(tool, maxC); adv != "" {
			fix = append(fix, adv)
		} else if maxC > 0 {
			fix = append(fix, fmt.Sprintf("record them longer: at least %d completions inside the steady-state window (%d at c=%d) over at least %g request lifetimes (ceiling record's default level size does this)",
				levelrule.MinWindowCompletions, levelrule.MinCompletions(maxC), maxC, levelrule.MinWindowLifetimes))
		} else {
			fix = append(fix, "record them longer (ceiling record's default level size runs each until the rule holds)")
		}
	}
	if rate {
		fix = append(fix, "a rate the server cannot complete measures overload: its throughput is shown but it has no steady concurrency")
	}
	msg := fmt.Sprintf("%d of %d levels are invalid and excluded from the ceilings and fits (%s): see invalid_reason per level",
		len(names), len(levels), strings.Join(names, ", "))
	if len(fix) > 0 {
		msg += "; " + strings.Join(fix, "; ")
	}
	return msg
}

// cutShortAdvice is what to rerun with for the stored causes a level was cut short.
func cutShortAdvice(causes []string) string {
	all := strings.Join(causes, " ")
	var out []string
	if strings.Contains(all, "--max-level-duration") {
		out = append(out, "a larger --max-level-duration")
	}
	if strings.Contains(all, "interrupted") {
		out = append(out, "a rerun of those levels left to finish (record --resume)")
	}
	if strings.Contains(all, "failed") || strings.Contains(all, "server stopped") {
		out = append(out, "a rerun of those levels once the server answers")
	}
	if len(out) == 0 {
		return ""
	}
	return " (rerun with " + strings.Join(out, ", or ") + ")"
}

// sourceRerun is the advice for rerunning an imported benchmark's invalid levels in
// its own tool's flags; "" for ceiling's own traces.
func sourceRerun(tool string, maxC int) string {
	n := levelrule.MinCompletions(max(maxC, 1))
	if tool == "" {
		return ""
	}
	if b := engine.BenchOf(tool); b != nil {
		return b.Rerun(n, maxC)
	}
	return fmt.Sprintf("rerun them with %s, with arrivals fast enough to keep every level full and well over %d requests per level (the completions a steady-state window needs at c=%d)", tool, n, maxC)
}
