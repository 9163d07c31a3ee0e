package record

import "fmt"

// The sweep's rules, as pure functions of the plan and the levels measured so far,
// so that each is tested without an engine.

// level is one step of the sweep.
type level struct {
	index       int
	concurrency int
	rate        float64
	speed       float64 // a replay level's time scale (0: not a replay)
}

// levelAt returns the i-th level of a plan (ok false past its end): the rates of an
// open-loop plan, the concurrencies of a closed-loop one, or 1, 2, 4, ... for auto.
func levelAt(o *Options, i int) (level, bool) {
	switch {
	case o.Replay != "":
		if i >= len(o.ReplaySpeeds) {
			return level{}, false
		}
		return level{index: i, speed: o.ReplaySpeeds[i]}, true
	case len(o.Rates) > 0:
		if i >= len(o.Rates) {
			return level{}, false
		}
		return level{index: i, rate: o.Rates[i]}, true
	case o.Auto:
		c := 1 << i
		return level{index: i, concurrency: c}, true
	default:
		if i >= len(o.Concurrency) {
			return level{}, false
		}
		return level{index: i, concurrency: o.Concurrency[i]}, true
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
