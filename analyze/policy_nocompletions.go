package analyze

// A level where every request failed measured nothing: its throughput is 0 only
// because nothing completed, and a bootstrap of nothing gives the interval 0–0,
// which reads as a measurement. Its intervals are none ("—"), not a number.

// NoCompletions reports whether no measured request of the level succeeded.
func NoCompletions(l Level) bool { return l.Requests <= l.Errors }

// dropEmptyIntervals removes the intervals of the levels without a completion.
func dropEmptyIntervals(r *Run) {
	for i := range r.Levels {
		if l := &r.Levels[i]; l.CI != nil && NoCompletions(*l) {
			l.CI.OutputTokS, l.CI.RequestS = nil, nil
			l.CI.TTFTP50, l.CI.TTFTP99, l.CI.TPOTP50, l.CI.TPOTP99 = nil, nil, nil, nil
		}
	}
}
