package analyze

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/searchrule"
	"github.com/ceiling-llm/ceiling/trace"
)

// The errors ceiling: a level where more than a few requests fail is past what
// the deployment serves, whatever its throughput (a server answering 40% of its
// requests with HTTP 500 "CUDA out of memory" has no ceiling "above the tested
// range"). The criterion is the recorder's search's: --max-errors, 5% by default,
// so that a sweep and a search of one server answer alike.

// defaultMaxErrors is the share of failed requests above which a level is past
// the ceiling when neither the analysis nor the recording's search sets one: the
// search's own default.
const defaultMaxErrors = 0.05

// runMaxErrors is the errors criterion a run is judged by: opt's, else the one
// the recording's search stored ("errors <= 5%"; a search stored without one ran
// with the criterion off), else defaultMaxErrors. ok is false where it is off.
func runMaxErrors(opt Options, plan trace.Plan) (share float64, ok bool) {
	switch {
	case opt.MaxErrors > 0:
		return opt.MaxErrors, true
	case opt.MaxErrors < 0:
		return 0, false
	case plan.Search != nil && len(plan.Search.Criteria) > 0:
		return searchrule.StoredErrors(plan.Search.Criteria)
	}
	return defaultMaxErrors, true
}

// failedShare is the share of a level's requests that failed for another reason
// than a full KV cache (0 without any): KV-exhaustion errors are the KV ceiling's
// evidence (policy_kvceiling.go), the cause that the failures are the symptom of,
// and a KV ceiling between two levels is finer than the level below them.
func failedShare(l Level) float64 {
	if l.Requests <= 0 {
		return 0
	}
	return float64(failedOther(l)) / float64(l.Requests)
}

// failedOther is how many of a level's requests failed for another reason than a
// full KV cache.
func failedOther(l Level) int {
	return max(0, l.Errors-l.ErrorKinds[KindKVExhausted])
}

// errorCeiling finds the first level, of all (invalid levels too: a level where
// most requests fail is often too short or too empty to be valid for that very
// reason), whose failed share is above limit; the ceiling is the highest valid
// level below it. found is false where no level fails; below is true where no
// valid level lies below the first that fails (the ceiling is then 0: below the
// tested range).
func errorCeiling(all, valid []Level, limit float64) (value float64, evidence string, found, below bool) {
	for _, l := range sortedLevels(all) {
		share := failedShare(l)
		if share <= limit {
			continue
		}
		n := offered(l)
		ev := fmt.Sprintf("%d of %d requests failed at %s (%.1f%%, above %s)%s", failedOther(l), l.Requests, offeredLabel(l), 100*share, pctText(limit), mostCommonError(l))
		if kv := l.ErrorKinds[KindKVExhausted]; kv > 0 {
			ev += fmt.Sprintf(", besides %d for a full KV cache (the KV ceiling's evidence)", kv)
		}
		best := math.Inf(-1)
		for _, v := range valid {
			if o := offered(v); o < n && failedShare(v) <= limit {
				best = math.Max(best, o)
			}
		}
		if math.IsInf(best, -1) {
			return 0, ev + ": already at the lowest level tested, so the ceiling is below the tested range", true, true
		}
		return best, fmt.Sprintf("%s; %g is the highest valid level below it", ev, best), true, false
	}
	return 0, "", false, false
}

// mostCommonError names a level's most frequent kind of failure ("" with none).
func mostCommonError(l Level) string {
	kind, most := "", 0
	for k, n := range l.ErrorKinds {
		if k == KindKVExhausted {
			continue
		}
		if n > most || (n == most && k < kind) {
			kind, most = k, n
		}
	}
	if kind == "" {
		return ""
	}
	return fmt.Sprintf(", most often %s (%d)", kind, most)
}
