package searchrule

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

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
		return c.Metric + " " + PercentileName(c.P)
	}
	return c.Kind
}

// String is the criterion as the plan stores it: "ttft p95 <= 2s".
func (c Criterion) String() string {
	switch c.Kind {
	case "latency":
		return fmt.Sprintf("%s <= %s", c.Name(), time.Duration(c.Limit*float64(time.Second)))
	case "errors":
		return fmt.Sprintf("errors <= %s", Pct(c.Limit))
	case "goodput":
		return fmt.Sprintf("goodput >= %s", Pct(c.Limit))
	case "kv":
		return "kv: no preemption, retraction or KV error"
	case "kv-usage":
		return fmt.Sprintf("kv-usage < %s", Pct(c.Limit))
	}
	return c.Kind
}

// StoredErrors reads the errors criterion back from a plan's stored criteria (as
// String writes them, "errors <= 5%"); ok is false where none is stored.
func StoredErrors(criteria []string) (share float64, ok bool) {
	for _, c := range criteria {
		if v, found := strings.CutPrefix(c, "errors <= "); found {
			if f, err := ParseShare(v); err == nil && f > 0 {
				return f, true
			}
		}
	}
	return 0, false
}

// Pct writes a share as the plan stores it: 0.05 as "5%".
func Pct(f float64) string { return strconv.FormatFloat(100*f, 'f', -1, 64) + "%" }

// ParseSLO parses a latency SLO's text for metric (ttft, tpot, itl, e2e): "2s"
// (at p99, as analyze checks SLOs), "p95:2s", or several, "p95:2s,p99.9:5s".
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

// ParseShare parses a share: "5%" or "0.05".
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

// TailNeed is the number of values the p-th percentile needs: 1/(1 − p/100),
// rounded up (rounded first to absorb float error: p99.9 needs 1,000, not 1,001).
func TailNeed(p float64) int {
	if p <= 0 || p >= 100 {
		return 0
	}
	return int(math.Ceil(math.Round(100/(100-p)*1e6) / 1e6))
}

// PercentileName is how a percentile is written: p99.9, p95, p97.5.
func PercentileName(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}
