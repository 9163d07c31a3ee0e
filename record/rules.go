package record

import "time"

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
	// scale multiplies the plan's level size (a search's rerun of an invalid
	// level: 2, 4, 8); 0 or 1 = as planned.
	scale int
	// duration, when set, sends for this long whatever the plan's level size (a
	// search's --sustain level).
	duration time.Duration
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
// concurrencies of a closed-loop one (a search's levels come from search.go).
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
	default:
		if p >= len(o.Concurrency) {
			return level{}, false
		}
		return level{concurrency: o.Concurrency[p]}, true
	}
}
