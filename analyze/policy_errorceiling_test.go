package analyze

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// The errors ceiling: the first level whose failed share is above the criterion
// (invalid levels too) bounds the ceiling at the highest valid level below it; at
// the lowest level it is below the tested range; a level within the criterion
// never binds.
func TestErrorCeiling(t *testing.T) {
	lv := func(c, req, errs int, valid bool) Level {
		return Level{Concurrency: c, Requests: req, Errors: errs, Valid: valid, ErrorKinds: map[string]int{"http_500": errs}}
	}
	for _, tc := range []struct {
		name             string
		levels           []Level
		wantFound, below bool
		want             float64
		evidence         string
	}{
		{"none fails", []Level{lv(1, 40, 0, true), lv(2, 40, 2, true), lv(4, 40, 1, true)}, false, false, 0, ""},
		{"the third fails", []Level{lv(1, 40, 0, true), lv(2, 40, 2, true), lv(4, 40, 6, true)}, true, false, 2, "6 of 40 requests failed at c=4 (15.0%, above 5%), most often http_500 (6); 2 is the highest valid level below it"},
		{"an invalid level fails", []Level{lv(1, 40, 0, true), lv(2, 40, 0, true), lv(4, 8, 8, false)}, true, false, 2, "8 of 8 requests failed at c=4"},
		{"the lowest fails", []Level{lv(1, 20, 8, true), lv(2, 20, 6, true)}, true, true, 0, "already at the lowest level tested"},
		{"KV-exhaustion errors are the KV ceiling's", []Level{lv(1, 40, 0, true), {Concurrency: 8, Requests: 40, Errors: 10, Valid: true, ErrorKinds: map[string]int{KindKVExhausted: 10}}}, false, false, 0, ""},
		{"below the failing level only invalid ones", []Level{lv(1, 40, 0, false), lv(2, 40, 9, true)}, true, true, 0, "already at the lowest level tested"},
	} {
		var valid []Level
		for _, l := range tc.levels {
			if l.Valid {
				valid = append(valid, l)
			}
		}
		v, ev, found, below := errorCeiling(tc.levels, valid, 0.05)
		if found != tc.wantFound || below != tc.below || v != tc.want || !strings.Contains(ev, tc.evidence) {
			t.Errorf("%s: ceiling %g found %v below %v (%q), want %g %v %v with %q", tc.name, v, found, below, ev, tc.want, tc.wantFound, tc.below, tc.evidence)
		}
	}
}

// The criterion is the analysis's own, else the one the search stored (off where
// the search ran without one), else 5%.
func TestRunMaxErrors(t *testing.T) {
	search := func(crit ...string) trace.Plan { return trace.Plan{Search: &trace.SearchPlan{Criteria: crit}} }
	for _, tc := range []struct {
		name  string
		opt   float64
		plan  trace.Plan
		share float64
		on    bool
	}{
		{"default", 0, trace.Plan{}, 0.05, true},
		{"given", 0.1, search("errors <= 20%"), 0.1, true},
		{"off", -1, trace.Plan{}, 0, false},
		{"the search's", 0, search("ttft p99 <= 2s", "errors <= 20%"), 0.2, true},
		{"a search without it", 0, search("ttft p99 <= 2s"), 0, false},
	} {
		share, on := runMaxErrors(Options{MaxErrors: tc.opt}, tc.plan)
		if share != tc.share || on != tc.on {
			t.Errorf("%s: %g %v, want %g %v", tc.name, share, on, tc.share, tc.on)
		}
	}
}
