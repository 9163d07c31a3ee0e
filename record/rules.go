package record

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/trace"
)

// The sweep's rules, as pure functions of the plan and the levels measured so far,
// so that each is tested without an engine.

// level is one step of the sweep.
type level struct {
	index       int
	point       int // the sweep point (index without repeats)
	repeat      int // which recording of the point, 0-based (--repeat)
	repeats     int // how many recordings each point has (0 or 1: no --repeat)
	concurrency int
	rate        float64
	speed       float64 // a replay level's time scale (0: not a replay)
}

// levelAt returns the i-th level of a plan (ok false past its end). With --repeat
// N, levels i = N*p .. N*p+N-1 are the N recordings of point p, back to back: the
// server's caches and batch state carry over between consecutive levels whatever
// the order, and in order the auto rule judges a point once all its repeats are in
// and the progress reads point by point.
func levelAt(o *Options, i int) (level, bool) {
	n := max(o.Repeat, 1)
	lv, ok := pointAt(o, i/n)
	lv.index, lv.point, lv.repeat = i, i/n, i%n
	if n > 1 {
		lv.repeats = n
	}
	return lv, ok
}

// pointAt returns the p-th point of a plan: the rates of an open-loop plan, the
// concurrencies of a closed-loop one, or 1, 2, 4, ... for auto.
func pointAt(o *Options, p int) (level, bool) {
	switch {
	case o.Replay != "":
		if p >= len(o.ReplaySpeeds) {
			return level{}, false
		}
		return level{speed: o.ReplaySpeeds[p]}, true
	case len(o.Rates) > 0:
		if p >= len(o.Rates) {
			return level{}, false
		}
		return level{rate: o.Rates[p]}, true
	case o.Auto:
		return level{concurrency: 1 << p}, true
	default:
		if p >= len(o.Concurrency) {
			return level{}, false
		}
		return level{concurrency: o.Concurrency[p]}, true
	}
}

// autoCap is the largest level --concurrency auto may run, and why: twice what the
// revealed KV capacity (kvCap tokens, 0 = unknown) holds at the workload's length,
// else maxAuto.
func autoCap(kvCap int64, promptTokens, outputTokens, maxAuto int) (int, string) {
	if kvCap > 0 {
		per := int64(promptTokens + outputTokens)
		if per <= 0 {
			per = int64(outputTokens) + 1
		}
		holds := max(1, int(kvCap/per))
		return 2 * holds, fmt.Sprintf("2× the %d requests the server's KV cache (%d tokens) holds at %d tokens each", holds, kvCap, per)
	}
	return maxAuto, fmt.Sprintf("the maximum of %d", maxAuto)
}

// levelResult is what the auto rule compares between levels.
type levelResult struct {
	concurrency int
	requests    int // measured (non-warm-up) requests
	errors      int // of the measured requests
	outputTokS  float64
}

// autoStop says whether --concurrency auto stops after level cur, whose
// predecessor was prev (prev.concurrency 0: cur is the first level): when more than
// 5% of its requests failed, or its throughput rose less than 5% over prev's.
func autoStop(prev, cur levelResult) (string, bool) {
	if cur.requests > 0 && float64(cur.errors)/float64(cur.requests) > 0.05 {
		return fmt.Sprintf("auto: errors above 5%% at c=%d (%d of %d)", cur.concurrency, cur.errors, cur.requests), true
	}
	if prev.concurrency > 0 && cur.outputTokS < 1.05*prev.outputTokS {
		return fmt.Sprintf("auto: throughput rose less than 5%% from c=%d (%.1f tok/s) to c=%d (%.1f tok/s)",
			prev.concurrency, prev.outputTokS, cur.concurrency, cur.outputTokS), true
	}
	return "", false
}

// pointResult pools the recorded repeats of the point at concurrency c for the auto
// rule: requests and errors summed, throughput averaged.
func pointResult(levels []trace.LevelInfo, c int) levelResult {
	r := levelResult{concurrency: c}
	n := 0
	for _, l := range levels {
		if l.Concurrency != c || l.Rate != 0 {
			continue
		}
		r.requests += l.Requests
		r.errors += l.Errors
		r.outputTokS += l.OutputTokS
		n++
	}
	if n > 0 {
		r.outputTokS /= float64(n)
	}
	return r
}
