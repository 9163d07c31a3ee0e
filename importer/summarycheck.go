package importer

import "fmt"

// Summary-level points get the value checks of the per-request importers
// (check.go): a point with a concurrency, rate, GPU count, throughput, latency or
// count no measurement can have (concurrency 1e15, 1e308 or −5 tok/s, a TTFT of
// −1 s, tp −4) is left out with a warning naming the file, the point and the
// field; a file none of whose points is possible is refused.

// Bounds of a summary point's figures beyond those of check.go.
const (
	maxSummaryGPUs = 1 << 16 // GPUs of one configuration
	maxSummaryTokS = 1e9     // output tokens/s of a whole configuration
)

// checkSummary leaves out of s every point with an impossible value, adding a
// warning for each; file names the file in the warnings.
func checkSummary(s *Summary, file string) error {
	kept := s.Points[:0]
	var first string
	for _, p := range s.Points {
		if why := impossiblePoint(p); why != "" {
			if first == "" {
				first = why
			}
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: point %s left out: %s", file, p.Label, why))
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == 0 {
		return fmt.Errorf("%s: every summary point has an impossible value (the first: %s)", file, first)
	}
	s.Points = kept
	return nil
}

// impossiblePoint names the first impossible value of a point ("" = none).
func impossiblePoint(p SummaryPoint) string {
	switch {
	case !inRange(p.Concurrency, maxImportConcurrency):
		return fmt.Sprintf("concurrency %g is out of range (0 to %d)", p.Concurrency, maxImportConcurrency)
	case !inRange(p.Rate, maxImportRate):
		return fmt.Sprintf("rate %g is not a number of requests/s from 0 to %g", p.Rate, float64(maxImportRate))
	case p.GPUs < 0 || p.GPUs > maxSummaryGPUs:
		return fmt.Sprintf("GPU count (tp) %d is out of range (0 to %d)", p.GPUs, maxSummaryGPUs)
	case p.Requests < 0 || p.Requests > maxImportTokens:
		return fmt.Sprintf("request count %d is out of range", p.Requests)
	case p.Failures < 0 || p.Failures > maxImportTokens:
		return fmt.Sprintf("failure count %d is out of range", p.Failures)
	}
	for _, f := range []struct {
		name string
		v    *float64
		max  float64
	}{
		{"output tok/s per GPU", p.OutputTokSPerGPU, maxSummaryTokS},
		{"output tok/s", p.OutputTokS, maxSummaryTokS},
		{"requests/s", p.RequestS, maxImportRate},
		{"tok/s per user", p.PerUserTokS, maxSummaryTokS},
	} {
		if f.v != nil && !inRange(*f.v, f.max) {
			return fmt.Sprintf("%s %g is not a number from 0 to %g", f.name, *f.v, f.max)
		}
	}
	for _, l := range []struct {
		name string
		st   SummaryStats
	}{{"ttft", p.TTFT}, {"tpot", p.TPOT}, {"e2e", p.E2E}} {
		for _, s := range []struct {
			name string
			v    *float64
		}{{"mean", l.st.Mean}, {"p50", l.st.P50}, {"p90", l.st.P90}, {"p99", l.st.P99}} {
			if s.v != nil && !inRange(*s.v, maxImportSeconds) {
				return fmt.Sprintf("%s %s %g s is not a number of seconds from 0 to %g", l.name, s.name, *s.v, float64(maxImportSeconds))
			}
		}
	}
	return ""
}
