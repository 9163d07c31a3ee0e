package levelrule

import (
	"testing"
	"time"
)

func TestRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"c=1 needs 8 completions", CompletionsOK(7, 1), false},
		{"c=1 with 8", CompletionsOK(8, 1), true},
		{"c=32 needs 32", CompletionsOK(31, 32), false},
		{"in flight 80%", InFlightOK(6.4, 8), true},
		{"in flight 79%", InFlightOK(6.3, 8), false},
		{"rate 80%", RateOK(8, 10), true},
		{"window of 2 lifetimes", LengthOK(8, 4), true},
		{"window under 2 lifetimes", LengthOK(7.9, 4), false},
		{"unknown lifetime", LengthOK(1, 0), true},
		// The sizer's stop rule: the minimums with the margin, and the steady state.
		{"sized: 10 in 30 s of 4 s requests", Sized(1, 10, 30*time.Second, 4*time.Second, SteadyState), true},
		{"sized: 9 is under 1.25·8", Sized(1, 9, 40*time.Second, 4*time.Second, SteadyState), false},
		{"sized: under the steady state", Sized(1, 20, 29*time.Second, time.Second, SteadyState), false},
		{"sized: 30 s of 13 s requests is under 2.5 lifetimes", Sized(1, 10, 30*time.Second, 13*time.Second, SteadyState), false},
		{"sized: c=64 needs 80", Sized(64, 79, time.Minute, time.Second, SteadyState), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// Whatever the sizer accepts, the validity rule accepts.
	for c := 1; c <= 256; c *= 2 {
		for done := 0; done < 400; done += 7 {
			for _, p50 := range []time.Duration{0, time.Second, 4 * time.Second, 20 * time.Second} {
				steady := 45 * time.Second
				if Sized(c, done, steady, p50, SteadyState) && !(CompletionsOK(done, c) && LengthOK(steady.Seconds(), p50.Seconds())) {
					t.Errorf("c=%d done=%d p50=%v: sized but invalid", c, done, p50)
				}
			}
		}
	}
}
