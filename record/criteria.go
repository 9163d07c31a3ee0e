package record

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/levelrule"
)

// The criteria of the ceiling search: each optional, combinable, and named when it
// fails. A level is judged on analyze's own figures for it (the same the analysis
// and the report show), so the search's answer and the analysis agree.

// Criterion is one pass/fail rule a search level is judged by.
type Criterion struct {
	// Kind is latency (an SLO on a percentile of Metric), errors (the share of
	// failed requests), goodput (the share of requests meeting every latency SLO),
	// kv (the server's evidence of a full KV cache: preemptions, retractions, KV
	// errors) or kv-usage (the server's mean KV usage).
	Kind   string
	Metric string  // latency: ttft, tpot, itl, e2e
	P      float64 // latency: the percentile (99 = p99)
	Limit  float64 // latency: seconds; errors, goodput, kv-usage: a share (0.05)
}

// Name is how the criterion is named when it fails: "ttft p95", "errors".
func (c Criterion) Name() string {
	if c.Kind == "latency" {
		return c.Metric + " " + analyze.PercentileName(c.P)
	}
	return c.Kind
}

// String is the criterion as the plan stores it: "ttft p95 <= 2s".
func (c Criterion) String() string {
	switch c.Kind {
	case "latency":
		return fmt.Sprintf("%s <= %s", c.Name(), time.Duration(c.Limit*float64(time.Second)))
	case "errors":
		return fmt.Sprintf("errors <= %s", pct(c.Limit))
	case "goodput":
		return fmt.Sprintf("goodput >= %s", pct(c.Limit))
	case "kv":
		return "kv: no preemption, retraction or KV error"
	case "kv-usage":
		return fmt.Sprintf("kv-usage < %s", pct(c.Limit))
	}
	return c.Kind
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', -1, 64) + "%" }

// ParseSLO parses a latency SLO flag's value for metric (ttft, tpot, itl, e2e):
// "2s" (at p99, as analyze checks SLOs), "p95:2s", or several, "p95:2s,p99.9:5s".
func ParseSLO(metric, text string) ([]Criterion, error) {
	var out []Criterion
	for _, f := range strings.Split(text, ",") {
		f = strings.TrimSpace(f)
		p, d := 99.0, f
		if i := strings.IndexByte(f, ':'); i >= 0 {
			ps := strings.TrimSpace(f[:i])
			v, err := strconv.ParseFloat(strings.TrimPrefix(strings.ToLower(ps), "p"), 64)
			if err != nil || !strings.HasPrefix(strings.ToLower(ps), "p") || !(v > 0 && v < 100) {
				return nil, fmt.Errorf("%q: the percentile %q is not p0 < pN < p100 (e.g. p95, p99.9)", f, ps)
			}
			p, d = v, strings.TrimSpace(f[i+1:])
		}
		dur, err := time.ParseDuration(d)
		if err != nil || dur <= 0 {
			return nil, fmt.Errorf("%q: the target %q is not a positive duration (e.g. 2s, 50ms)", f, d)
		}
		out = append(out, Criterion{Kind: "latency", Metric: metric, P: p, Limit: dur.Seconds()})
	}
	return out, nil
}

// ParseShare parses a share flag: "5%" or "0.05".
func ParseShare(text string) (float64, error) {
	t := strings.TrimSpace(text)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSuffix(t, "%"), 0.01
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a share (e.g. 5%% or 0.05)", text)
	}
	v *= scale
	if v > 1 {
		return 0, fmt.Errorf("%q is more than 100%%", text)
	}
	return v, nil
}

// judgeLevel judges one analysed level on the criteria: the names and evidence of
// those that fail, or why the level cannot be judged (invalid: it is re-run
// longer). Errors, KV evidence and an open-loop overload count even on an invalid
// level; latencies, goodput and KV usage need a valid one, with enough requests
// for each asked percentile.
func judgeLevel(crit []Criterion, l analyze.Level) (failed, evidence []string, invalid string) {
	fail := func(name, ev string) {
		failed = append(failed, name)
		evidence = append(evidence, ev)
	}
	for _, c := range crit {
		switch c.Kind {
		case "errors":
			if l.Requests > 0 && float64(l.Errors) > c.Limit*float64(l.Requests) {
				fail("errors", fmt.Sprintf("%d of %d requests failed (%.1f%%, above %s)%s",
					l.Errors, l.Requests, 100*float64(l.Errors)/float64(l.Requests), pct(c.Limit), errorKinds(l.ErrorKinds)))
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
			s := latencyOf(l, c.Metric)
			v, note := s.TailValue(c.P)
			if need := analyze.TailNeed(c.P); s.N < need {
				what := "requests"
				if c.Metric == "itl" {
					what = "gaps"
				}
				short = append(short, fmt.Sprintf("%s %s needs ≥ %d %s; this level has %d", c.Metric, analyze.PercentileName(c.P), need, what, s.N))
				continue
			}
			switch {
			case v == nil:
				fail(c.Name(), fmt.Sprintf("%s %s cannot be measured: %s", c.Metric, analyze.PercentileName(c.P), note))
			case *v > c.Limit:
				fail(c.Name(), fmt.Sprintf("%s %s %s > %s (%d %s)", c.Metric, analyze.PercentileName(c.P),
					fmtSec(*v), fmtSec(c.Limit), s.N, map[bool]string{true: "gaps", false: "requests"}[c.Metric == "itl"]))
			}
		case "goodput":
			if l.GoodputRequestS != nil && l.RequestS > 0 {
				if share := *l.GoodputRequestS / l.RequestS; share < c.Limit {
					fail("goodput", fmt.Sprintf("%.1f%% of requests met every SLO (below %s)", 100*share, pct(c.Limit)))
				}
			}
		case "kv-usage":
			if s := l.Server; s != nil && s.KVUsageMean != nil && *s.KVUsageMean >= c.Limit {
				fail("kv-usage", fmt.Sprintf("the server's KV cache was %.1f%% full on average (max %s), at or above %s",
					100**s.KVUsageMean, pctPtr(s.KVUsageMax), pct(c.Limit)))
			}
		}
	}
	if len(failed) == 0 && len(short) > 0 {
		return nil, nil, strings.Join(short, "; ")
	}
	return failed, evidence, ""
}

func latencyOf(l analyze.Level, metric string) analyze.Summary {
	switch metric {
	case "ttft":
		return l.TTFT
	case "tpot":
		return l.TPOT
	case "itl":
		return l.ITL
	}
	return l.E2E
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

// tailNeed is the most requests a latency criterion's percentile needs in one
// level (p95: 20, p99: 100; analyze.TailNeed), with the level rule's margin: the
// search sizes its levels to it instead of re-running them longer.
func (o *Options) tailNeed() int {
	n := 0
	for _, c := range o.Criteria {
		if c.Kind == "latency" {
			n = max(n, analyze.TailNeed(c.P))
		}
	}
	return int(math.Ceil(levelrule.Margin * float64(n)))
}
