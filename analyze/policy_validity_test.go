package analyze

import (
	"context"
	"strings"
	"testing"
)

func TestCheckValidity(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name   string
		lv     Level
		valid  bool
		reason string
	}{
		{"steady closed loop", Level{Concurrency: 8, DecodeConcurrency: 7, WaitingConcurrency: 0.9, WindowCompletions: 40, WindowS: 10, E2E: Summary{P50: p(1)}}, true, ""},
		{"few in flight", Level{Concurrency: 128, DecodeConcurrency: 60, WaitingConcurrency: 2, WindowCompletions: 200, WindowS: 20, E2E: Summary{P50: p(5)}}, false, "62.0 requests in flight on average of the 128 targeted"},
		{"too few completions", Level{Concurrency: 32, DecodeConcurrency: 32, WindowCompletions: 8, WindowS: 0.19, E2E: Summary{P50: p(0.05)}}, false, "8 completed inside"},
		{"window shorter than two lifetimes", Level{Concurrency: 4, DecodeConcurrency: 4, WindowCompletions: 20, WindowS: 1, E2E: Summary{P50: p(0.6)}}, false, "shorter than 2 request lifetimes"},
		{"open loop keeps up", Level{Rate: 10, RequestS: 9.8, DecodeConcurrency: 5, WindowCompletions: 300, WindowS: 30, E2E: Summary{P50: p(0.5)}}, true, ""},
		{"open loop overloaded", Level{Rate: 10, RequestS: 6, DecodeConcurrency: 50, WindowCompletions: 180, WindowS: 30, E2E: Summary{P50: p(5)}}, false, "completed 6.00 requests/s of the 10/s offered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv := tc.lv
			checkValidity(&lv)
			if lv.Valid != tc.valid {
				t.Errorf("valid %v, want %v (reason %q)", lv.Valid, tc.valid, lv.InvalidReason)
			}
			if tc.reason == "" && lv.InvalidReason != "" || !strings.Contains(lv.InvalidReason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", lv.InvalidReason, tc.reason)
			}
		})
	}
}

// TestInvalidLevelsMakeNoCeiling adds an invalid level that would move the batch
// ceiling and the knee (a top level whose decode concurrency jumped) and checks that
// the ceilings are those of the valid levels alone, with the warning counting it.
func TestInvalidLevelsMakeNoCeiling(t *testing.T) {
	valid := []Level{level(1, 100, 1, 0, 0.1), level(2, 200, 2, 0, 0.1), level(4, 390, 4, 0, 0.1),
		level(8, 400, 4.1, 3.9, 0.2), level(16, 405, 4.1, 11.9, 0.4)}
	bad := level(64, 1500, 30, 2, 0.5)
	bad.Valid, bad.InvalidReason = false, "32.0 requests in flight on average of the 64 targeted (50%)"

	ref := &Run{Levels: valid}
	if err := modelRun(ref, serverFacts{}, workloadTokens{}, Options{}); err != nil {
		t.Fatal(err)
	}
	r := &Run{Levels: append(append([]Level{}, valid...), bad)}
	if err := modelRun(r, serverFacts{}, workloadTokens{}, Options{}); err != nil {
		t.Fatal(err)
	}
	if ref.Ceilings.Batch == nil || ref.Ceilings.Knee == nil {
		t.Fatalf("reference sweep finds no batch or knee: %+v", ref.Ceilings)
	}
	if fmtPtr(r.Ceilings.Batch) != fmtPtr(ref.Ceilings.Batch) || fmtPtr(r.Ceilings.Knee) != fmtPtr(ref.Ceilings.Knee) {
		t.Errorf("with the invalid level: batch %s knee %s, want %s and %s", fmtPtr(r.Ceilings.Batch), fmtPtr(r.Ceilings.Knee),
			fmtPtr(ref.Ceilings.Batch), fmtPtr(ref.Ceilings.Knee))
	}
	w := validityWarning(r.Levels, sizeExplicit, "")
	if !strings.Contains(w, "1 of 6 levels are invalid") || !strings.Contains(w, "c=64") || !strings.Contains(w, "without --requests-per-level") {
		t.Errorf("warning %q", w)
	}
	// An imported benchmark's levels are rerun with its own tool's flags.
	if w := validityWarning(r.Levels, sizeUnknown, "vllm"); !strings.Contains(w, "vllm bench serve --request-rate inf") || strings.Contains(w, "--requests-per-level") {
		t.Errorf("imported vLLM warning %q", w)
	}
}

// TestValidityAdviceIsNoCircle: the warning's advice never sends the user back to
// what made the level invalid. An explicitly sized level is sent to the default
// size; a default-sized one (which stops only when the rule holds) never is.
func TestValidityAdviceIsNoCircle(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	short := Level{Level: 0, Concurrency: 1, DecodeConcurrency: 1, WindowCompletions: 4, WindowS: 28, E2E: Summary{P50: p(7)}}
	starved := Level{Level: 1, Concurrency: 64, DecodeConcurrency: 20, WindowCompletions: 500, WindowS: 60, E2E: Summary{P50: p(4)}}
	// Cut short with the cause the recorder stored (issue 27: the warning named
	// every possible cause instead of the real one).
	capped, interrupted := short, short
	capped.StopReason = "stopped at --max-level-duration 2m0s before the level's steady state met the validity rule"
	interrupted.StopReason = "interrupted"
	for _, tc := range []struct {
		name       string
		lv         Level
		sizing     int
		want, deny []string
	}{
		{"explicit size, too short", short, sizeExplicit, []string{"without --requests-per-level and --duration-per-level", "at least 8 completions"}, []string{"--requests-per-level of at least"}},
		{"default size, too short", short, sizeDefault, []string{"--max-level-duration"}, []string{"without --requests-per-level", "--requests-per-level of at least"}},
		{"default size, too few in flight", starved, sizeDefault, []string{"fewer requests were in flight"}, []string{"without --requests-per-level", "--max-level-duration"}},
		{"default size, cut short by the cap", capped, sizeDefault, []string{"cut short: c=1 stopped at --max-level-duration 2m0s", "a larger --max-level-duration"}, []string{"interrupt", "failures", "does not say"}},
		{"default size, interrupted", interrupted, sizeDefault, []string{"cut short: c=1 interrupted", "left to finish"}, []string{"--max-level-duration", "failures"}},
		{"imported", short, sizeUnknown, []string{"record them longer", "at least 8 completions"}, []string{"without --requests-per-level"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv := tc.lv
			checkValidity(&lv)
			if lv.Valid {
				t.Fatalf("level valid: %+v", lv)
			}
			w := validityWarning([]Level{lv}, tc.sizing, "")
			for _, s := range tc.want {
				if !strings.Contains(w, s) {
					t.Errorf("warning %q lacks %q", w, s)
				}
			}
			for _, s := range tc.deny {
				if strings.Contains(w, s) {
					t.Errorf("warning %q says %q", w, s)
				}
			}
		})
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return trimFloat(*p)
}

// TestCutShortCauseFromTrace: the stop reason the recorder stored for a level
// reaches the analysis (Level.StopReason) and, for an invalid level, its invalid
// reason and the run's validity warning name it.
func TestCutShortCauseFromTrace(t *testing.T) {
	dir := t.TempDir()
	info := knownInfo()
	info.Plan.RequestsPerLevel, info.Plan.DurationPerLevelS = 0, 0 // default-sized levels
	const why = "stopped at --max-level-duration 2m0s before the level's steady state met the validity rule"
	info.Levels[0].StopReason = why
	a, err := Analyze(context.Background(), []string{writeTrace(t, dir, "a.parquet", info, knownRows())}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	var lv *Level
	for i := range r.Levels {
		if r.Levels[i].Level == 0 {
			lv = &r.Levels[i]
		}
	}
	if lv == nil || lv.StopReason != why {
		t.Fatalf("level 0: %+v; want its stored stop reason", lv)
	}
	if lv.Valid {
		t.Fatalf("the known trace's level 0 is valid (%+v): the test needs a level too short to be", lv)
	}
	if !strings.Contains(lv.InvalidReason, "cut short: "+why) {
		t.Errorf("invalid reason %q does not name the cause", lv.InvalidReason)
	}
	found := false
	for _, w := range r.Warnings {
		if strings.Contains(w, "cut short: c=2 "+why) {
			found = true
		}
		if strings.Contains(w, "by an interrupt or by failures") {
			t.Errorf("the warning guesses among causes though the trace names one: %q", w)
		}
	}
	if !found {
		t.Errorf("no warning names the stored cause: %q", r.Warnings)
	}
}
