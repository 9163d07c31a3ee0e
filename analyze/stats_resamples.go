package analyze

import "slices"

// Resamples returns the level's bootstrap resamples (copies), or nil when it has
// none: an imported run, the bootstrap off, or a Level decoded from JSON (the
// resamples are not part of the JSON contract).
func (l *Level) Resamples() *LevelResamples {
	rs := l.resamples
	if rs == nil {
		return nil
	}
	out := &LevelResamples{}
	if rs.blocks >= MinIntervalBlocks && l.WindowS > 0 {
		out.OutputTokS, out.RequestS = slices.Clone(rs.tok), slices.Clone(rs.req)
	}
	p50 := func(n int, v []float64) []float64 {
		if n < MinIntervalRequests {
			return nil
		}
		return slices.Clone(v)
	}
	p99 := func(n int, v []float64) []float64 {
		if n < MinP99IntervalRequests {
			return nil
		}
		return slices.Clone(v)
	}
	out.TTFTP50, out.TTFTP99 = p50(l.TTFT.N, rs.ttft50), p99(l.TTFT.N, rs.ttft99)
	out.TPOTP50, out.TPOTP99 = p50(l.TPOT.N, rs.tpot50), p99(l.TPOT.N, rs.tpot99)
	out.E2EP50, out.E2EP99 = p50(l.E2E.N, rs.e2e50), p99(l.E2E.N, rs.e2e99)
	return out
}
