package analyze

import (
	"fmt"
	"strings"
)

// Level validity: a level counts towards the ceilings and fits only when it measured
// what it is labelled with. A sweep of too few requests per level (8 requests at
// concurrency 32, say) never has its workers all busy long enough, so its window is a
// fraction of a second and its "concurrency 32" throughput is that of a handful of
// requests. The rules, checked on the steady-state window:
//
//   - in flight: the time-averaged number of requests in flight inside the window
//     (decode + waiting, Little's law) reaches at least minInFlightShare of the
//     level's concurrency (closed loop, or the cap of a rate level imported under a
//     max-concurrency cap: there the arrivals, not the server, limited it). An
//     open-loop level must complete at least minInFlightShare of its offered rate,
//     else its queue grew all level and its in-flight count only says how long it ran;
//   - completions: the window holds at least max(minWindowCompletions, concurrency)
//     completed requests (every worker finished one on average);
//   - length: the window lasts at least minWindowLifetimes median request
//     lifetimes (E2E p50), so that its throughput is not one phase of the batch.

const (
	minInFlightShare     = 0.8
	minWindowCompletions = 8
	minWindowLifetimes   = 2.0
)

// checkValidity sets lv.Valid and lv.InvalidReason from the rules above.
func checkValidity(lv *Level) {
	lv.InFlight = lv.DecodeConcurrency + lv.WaitingConcurrency
	lv.Valid, lv.InvalidReason = true, ""
	var reasons []string
	switch {
	case lv.Concurrency > 0:
		if lv.InFlight < minInFlightShare*float64(lv.Concurrency) {
			reasons = append(reasons, fmt.Sprintf("%.1f requests in flight on average of the %d targeted (%.0f%%)",
				lv.InFlight, lv.Concurrency, 100*lv.InFlight/float64(lv.Concurrency)))
		}
	case lv.Rate > 0:
		if lv.RequestS < minInFlightShare*lv.Rate {
			reasons = append(reasons, fmt.Sprintf("completed %.2f requests/s of the %g/s offered: the queue grew all level, so its concurrency is not a steady state",
				lv.RequestS, lv.Rate))
		}
	}
	need := max(minWindowCompletions, lv.Concurrency)
	if lv.WindowCompletions < need {
		reasons = append(reasons, fmt.Sprintf("%d completed inside the %s steady-state window (needs %d)",
			lv.WindowCompletions, fmtSeconds(lv.WindowS), need))
	}
	if p := lv.E2E.P50; p != nil && *p > 0 && lv.WindowS < minWindowLifetimes**p {
		reasons = append(reasons, fmt.Sprintf("the window (%s) is shorter than %g request lifetimes (E2E p50 %s)",
			fmtSeconds(lv.WindowS), minWindowLifetimes, fmtSeconds(*p)))
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

// validityWarning is the one warning that counts the invalid levels and says what to
// rerun with, in the words of the tool that recorded the run (tool: the importer's
// source tool, "" for ceiling's own recorder); "" when every level is valid.
func validityWarning(levels []Level, tool string) string {
	var names []string
	maxC := 0
	rate := false
	for _, l := range levels {
		if l.Valid {
			continue
		}
		names = append(names, offeredLabel(l))
		maxC = max(maxC, l.Concurrency)
		rate = rate || (l.Rate > 0 && l.Concurrency == 0)
	}
	if len(names) == 0 {
		return ""
	}
	fix := fmt.Sprintf("rerun them without --requests-per-level (each level then runs until every worker completed %d requests and its steady state lasted %s), or with --requests-per-level of at least %d (%d per worker at c=%d) or a longer --duration-per-level",
		recorderRequestsPerWorker, recorderSteadyState, recorderRequestsPerWorker*maxC, recorderRequestsPerWorker, maxC)
	if maxC == 0 {
		fix = "rerun them with a longer --duration-per-level"
	}
	if adv := sourceRerun(tool, maxC); adv != "" {
		fix = adv
	}
	if rate {
		fix += "; a rate the server cannot complete measures overload: its throughput is shown but it has no steady concurrency"
	}
	return fmt.Sprintf("%d of %d levels are invalid and excluded from the ceilings and fits (%s): see invalid_reason per level; %s",
		len(names), len(levels), strings.Join(names, ", "), fix)
}

// sourceRerun is the advice for rerunning an imported benchmark's invalid levels in
// its own tool's flags; "" for ceiling's own traces.
func sourceRerun(tool string, maxC int) string {
	n := recorderRequestsPerWorker * max(maxC, 1)
	switch t := strings.ToLower(tool); {
	case t == "":
		return ""
	case strings.HasPrefix(t, "vllm"):
		return fmt.Sprintf("rerun them with vllm bench serve --request-rate inf (a finite rate with --max-concurrency cannot keep that many requests in flight) and --num-prompts of at least %d (4 per concurrent request at %d)", n, maxC)
	case strings.HasPrefix(t, "sglang"):
		return fmt.Sprintf("rerun them with sglang.bench_serving --request-rate inf and --num-prompts of at least %d (4 per concurrent request at %d)", n, maxC)
	}
	return fmt.Sprintf("rerun them with %s, with arrivals fast enough to keep every level full and at least %d requests (4 per concurrent request at %d)", tool, n, maxC)
}

// The recorder's default level size (record.Options: neither --requests-per-level nor
// --duration-per-level), named here for the warning's advice.
const (
	recorderRequestsPerWorker = 4
	recorderSteadyState       = "30 s"
)

// validCell is the level table's validity column: "yes", or "NO" (the reason is
// listed under the table by invalidLines).
func validCell(l Level) string {
	if l.Valid {
		return "yes"
	}
	return "NO"
}

// invalidLines name each invalid level and why, for the text and markdown outputs.
func invalidLines(levels []Level) []string {
	var out []string
	for _, l := range levels {
		if !l.Valid {
			out = append(out, fmt.Sprintf("invalid: level %d (%s): %s", l.Level, offeredLabel(l), l.InvalidReason))
		}
	}
	return out
}
