// Package levelrule is the one rule that says whether a level measured what it is
// labelled with. The recorder sizes a default level with it (it stops sending once
// the rule holds, with a margin), and analyze judges every level with it, so a level
// recorded at the default size is valid by construction and a level analyze calls
// invalid can always be fixed by recording it at the default size.
//
// The rule, on a level's steady-state window (closed loop: from the moment every
// worker has a measured request in flight to the moment the first worker runs out
// of work; open loop: from the first to the last scheduled arrival):
//
//   - in flight: the time-averaged number of requests in flight in the window
//     reaches MinInFlightShare of the level's concurrency (an open-loop level must
//     complete MinInFlightShare of its offered rate);
//   - completions: the window holds at least MinCompletions(concurrency)
//     successful completions (every worker finished one on average, and never
//     fewer than MinWindowCompletions);
//   - length: the window lasts at least MinWindowLifetimes median request
//     lifetimes (E2E p50), so that its throughput is not one phase of the batch.
//
// Beyond validity, a default-sized level also runs for SteadyState, for precision.
package levelrule

import (
	"math"
	"time"
)

const (
	// MinInFlightShare of the concurrency must be in flight on average.
	MinInFlightShare = 0.8
	// MinWindowCompletions is the fewest completions a window may hold.
	MinWindowCompletions = 8
	// MinWindowLifetimes is the shortest window, in median request lifetimes.
	MinWindowLifetimes = 2.0
	// SteadyState is how long a default-sized level's window lasts at least.
	SteadyState = 30 * time.Second
	// Margin is how far past the validity minimums a default-sized level runs:
	// requests that end after the recorder stopped sending, or a median lifetime
	// that grows after the recorder estimated it, must not make it invalid.
	Margin = 1.25
)

// MinCompletions is the fewest successful completions the window of a level at
// concurrency c (0 for an open-loop level) must hold.
func MinCompletions(c int) int { return max(MinWindowCompletions, c) }

// InFlightOK reports whether inFlight requests on average fill concurrency c.
func InFlightOK(inFlight float64, c int) bool { return inFlight >= MinInFlightShare*float64(c) }

// RateOK reports whether an open-loop level completed enough of its offered rate.
func RateOK(completedPerS, offered float64) bool { return completedPerS >= MinInFlightShare*offered }

// CompletionsOK reports whether a window of n completions is enough at concurrency c.
func CompletionsOK(n, c int) bool { return n >= MinCompletions(c) }

// LengthOK reports whether a window of windowS seconds is long enough for requests
// whose median lifetime is lifetimeP50S seconds (0: unknown, not checked).
func LengthOK(windowS, lifetimeP50S float64) bool {
	return lifetimeP50S <= 0 || windowS >= MinWindowLifetimes*lifetimeP50S
}

// Sized is the default level size's stop rule for a closed-loop level at
// concurrency c: the window so far (steady, its length; done, the successful
// completions inside it; lifetimeP50, the median lifetime of the requests completed
// so far) meets the completion and length rules with Margin to spare, and has lasted
// steadyState (SteadyState but in tests).
func Sized(c, done int, steady, lifetimeP50, steadyState time.Duration) bool {
	return done >= SizedCompletions(c) && steady >= SizedWindow(lifetimeP50, steadyState)
}

// SizedCompletions is how many completions a default-sized level's window holds
// at least: MinCompletions with Margin.
func SizedCompletions(c int) int { return int(math.Ceil(Margin * float64(MinCompletions(c)))) }

// SizedWindow is how long a default-sized level's window lasts at least, for
// requests of median lifetime lifetimeP50: MinWindowLifetimes with Margin, and
// steadyState.
func SizedWindow(lifetimeP50, steadyState time.Duration) time.Duration {
	return max(steadyState, time.Duration(Margin*MinWindowLifetimes*float64(lifetimeP50)))
}
