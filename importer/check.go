package importer

import (
	"fmt"
	"math"
)

// Bounds of an imported value that a measurement can have. Anything outside is
// a broken or hostile file: converting it would wrap an int32 (1e15 becomes a
// negative concurrency, 2^40 tokens become 0) or an int64 of nanoseconds (NaN or
// 1e300 seconds become -9.2e9 s).
const (
	maxImportConcurrency = 1 << 24
	maxImportRate        = 1e9       // requests/s
	maxImportSeconds     = 1e7       // ~116 days: a duration, a latency or a gap
	maxImportTokens      = 1<<31 - 1 // a token count is stored as int32
	maxImportSentNs      = 1 << 62   // year 2116 from the epoch
)

// checkRun refuses a level whose own values are impossible (its concurrency, rate
// or duration), naming the file and the field, and excludes each request with an
// impossible value (a warning names the file, the level, the field and the value
// of the first one excluded, and how many). A level all of whose requests are
// impossible is refused.
func checkRun(run *Run, file string) error {
	for li := range run.Levels {
		lv := &run.Levels[li]
		where := fmt.Sprintf("%s: level %s", file, lv.Label)
		switch {
		case lv.Concurrency < 0 || lv.Concurrency > maxImportConcurrency:
			return fmt.Errorf("%s: concurrency %d is out of range (0 to %d)", where, lv.Concurrency, maxImportConcurrency)
		case !inRange(lv.Rate, maxImportRate):
			return fmt.Errorf("%s: rate %g is not a number of requests/s from 0 to %g", where, lv.Rate, maxImportRate)
		case !inRange(lv.DurationS, maxImportSeconds):
			return fmt.Errorf("%s: duration %g s is not a number of seconds from 0 to %g", where, lv.DurationS, maxImportSeconds)
		}
		kept := lv.Requests[:0]
		var first string
		excluded := 0
		for _, r := range lv.Requests {
			if why := impossible(r); why != "" {
				if excluded == 0 {
					first = why
				}
				excluded++
				continue
			}
			kept = append(kept, r)
		}
		if excluded == 0 {
			continue
		}
		if len(kept) == 0 {
			return fmt.Errorf("%s: every request has an impossible value (the first: %s)", where, first)
		}
		lv.Requests = kept
		run.Warnings = append(run.Warnings, fmt.Sprintf("%s: %d requests excluded for impossible values (the first: %s)", where, excluded, first))
	}
	return nil
}

// impossible names the first impossible value of a request ("" = none).
func impossible(r Request) string {
	secs := []struct {
		name string
		v    *float64
	}{{"ttft", r.TTFT}, {"e2e", r.E2E}}
	for _, s := range secs {
		if s.v != nil && !inRange(*s.v, maxImportSeconds) {
			return fmt.Sprintf("%s %g s", s.name, *s.v)
		}
	}
	for i, g := range r.Gaps {
		if !inRange(g, maxImportSeconds) {
			return fmt.Sprintf("chunk gap %d of %g s", i, g)
		}
	}
	toks := []struct {
		name string
		v    *int
	}{{"prompt tokens", r.Prompt}, {"output tokens", r.Output}, {"reasoning tokens", r.Reasoning}}
	for _, t := range toks {
		if t.v != nil && (*t.v < 0 || *t.v > maxImportTokens) {
			return fmt.Sprintf("%s %d", t.name, *t.v)
		}
	}
	switch {
	case r.SentNs < 0 || r.SentNs > maxImportSentNs:
		return fmt.Sprintf("send time %d ns (a time in seconds that is not finite or out of range)", r.SentNs)
	case r.Worker < 0 || r.Worker > maxImportTokens:
		return fmt.Sprintf("worker %d", r.Worker)
	case r.Status < 0 || r.Status > 999:
		return fmt.Sprintf("HTTP status %d", r.Status)
	}
	return ""
}

// inRange says whether v is a finite number from 0 to max.
func inRange(v, max float64) bool { return v >= 0 && v <= max && !math.IsInf(v, 0) }

// secondsToNs converts seconds to nanoseconds; a value that is not finite or
// does not fit int64 nanoseconds becomes math.MinInt64, which checkRun excludes
// (Go leaves such a conversion undefined).
func secondsToNs(s float64) int64 {
	ns := math.Round(s * 1e9)
	if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return math.MinInt64
	}
	return int64(ns)
}
