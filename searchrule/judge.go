package searchrule

import (
	"fmt"
	"slices"
	"strings"
)

// Judge judges one analysed level on the criteria: the names and evidence of those
// that fail, or why the level cannot be judged (invalid: the search re-runs it
// longer). Errors, KV evidence and an open-loop overload count even on an invalid
// level; latencies, goodput and KV usage need a valid one, with enough requests for
// each asked percentile.
func Judge(crit []Criterion, l Figures) (failed, evidence []string, invalid string) {
	fail := func(name, ev string) {
		failed = append(failed, name)
		evidence = append(evidence, ev)
	}
	for _, c := range crit {
		switch c.Kind {
		case "errors":
			if l.Requests > 0 && float64(l.Errors) > c.Limit*float64(l.Requests) {
				fail("errors", fmt.Sprintf("%d of %d requests failed (%.1f%%, above %s)%s",
					l.Errors, l.Requests, 100*float64(l.Errors)/float64(l.Requests), Pct(c.Limit), errorKinds(l.ErrorKinds)))
			}
		case "kv":
			if s := l.Server; s != nil && s.Preemptions != nil && *s.Preemptions > 0 {
				fail("kv", fmt.Sprintf("the server preempted (or retracted) %.0f requests during the level: its KV cache is full", *s.Preemptions))
			}
			n := 0
			for k, v := range l.ErrorKinds {
				if strings.HasPrefix(k, "kv") || strings.Contains(k, "context") {
					n += v
				}
			}
			if n > 0 {
				fail("kv", fmt.Sprintf("%d requests failed with KV-cache errors%s", n, errorKinds(l.ErrorKinds)))
			}
		}
	}
	if l.Rate > 0 && l.RequestS < 0.8*l.Rate {
		fail("overload", fmt.Sprintf("completed %.2f requests/s of the %g/s offered: the queue grew all level", l.RequestS, l.Rate))
	}
	if len(failed) > 0 {
		return failed, evidence, ""
	}
	if !l.Valid {
		return nil, nil, l.InvalidReason
	}
	var short []string
	for _, c := range crit {
		switch c.Kind {
		case "latency":
			what := "requests"
			if c.Metric == "itl" {
				what = "gaps"
			}
			t, ok := l.tail(c.Metric, c.P)
			if !ok {
				fail(c.Name(), fmt.Sprintf("%s %s cannot be measured: %s was not computed", c.Metric, PercentileName(c.P), PercentileName(c.P)))
				continue
			}
			if need := TailNeed(c.P); t.N < need {
				short = append(short, fmt.Sprintf("%s %s needs ≥ %d %s; this level has %d", c.Metric, PercentileName(c.P), need, what, t.N))
				continue
			}
			switch {
			case t.Value == nil:
				fail(c.Name(), fmt.Sprintf("%s %s cannot be measured: %s", c.Metric, PercentileName(c.P), t.Note))
			case *t.Value > c.Limit:
				fail(c.Name(), fmt.Sprintf("%s %s %s > %s (%d %s)", c.Metric, PercentileName(c.P),
					fmtSec(*t.Value), fmtSec(c.Limit), t.N, what))
			}
		case "goodput":
			if l.GoodputRequestS != nil && l.RequestS > 0 {
				if share := *l.GoodputRequestS / l.RequestS; share < c.Limit {
					fail("goodput", fmt.Sprintf("%.1f%% of requests met every SLO (below %s)", 100*share, Pct(c.Limit)))
				}
			}
		case "kv-usage":
			if s := l.Server; s != nil && s.KVUsageMean != nil && *s.KVUsageMean >= c.Limit {
				fail("kv-usage", fmt.Sprintf("the server's KV cache was %.1f%% full on average (max %s), at or above %s",
					100**s.KVUsageMean, pctPtr(s.KVUsageMax), Pct(c.Limit)))
			}
		}
	}
	if len(failed) == 0 && len(short) > 0 {
		return nil, nil, strings.Join(short, "; ")
	}
	return failed, evidence, ""
}

func pctPtr(f *float64) string {
	if f == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f%%", 100**f)
}

func errorKinds(kinds map[string]int) string {
	if len(kinds) == 0 {
		return ""
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, kinds[k]))
	}
	return ": " + strings.Join(parts, ", ")
}

func fmtSec(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2fs", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.1fms", s*1e3)
	}
	return fmt.Sprintf("%.0fµs", s*1e6)
}
