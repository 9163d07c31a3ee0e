package searchrule

import (
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	ttft := func(n int, p95 float64) []Tail {
		return []Tail{{Metric: "ttft", P: 95, N: n, Value: f(p95)},
			{Metric: "ttft", P: 99.9, N: n, Note: "p99.9 needs ≥ 1,000 requests; this level has 240"}}
	}
	valid := Figures{Concurrency: 8, Requests: 240, Valid: true, Tails: ttft(240, 1.5), RequestS: 4, GoodputRequestS: f(3.9)}
	slo95, _ := ParseSLO("ttft", "p95:2s")
	slo999, _ := ParseSLO("ttft", "p99.9:2s")
	slo90, _ := ParseSLO("ttft", "p90:2s")
	for _, tc := range []struct {
		name    string
		crit    []Criterion
		l       Figures
		failed  string
		invalid string
	}{
		{"meets p95", slo95, valid, "", ""},
		{"misses p95", slo95, func() Figures { l := valid; l.Tails = ttft(240, 2.5); return l }(), "ttft p95", ""},
		{"p99.9 from 240 requests is not judged", slo999, valid, "", "ttft p99.9 needs ≥ 1000 requests; this level has 240"},
		{"p95 from 12 requests is not judged", slo95, func() Figures { l := valid; l.Tails = ttft(12, 1); return l }(), "", "needs ≥ 20 requests"},
		{"a percentile the analyzer was not asked for fails", slo90, valid, "ttft p90", ""},
		{"invalid level is not judged on latency", slo95, func() Figures { l := valid; l.Valid, l.InvalidReason = false, "too short"; return l }(), "", "too short"},
		{"errors count on an invalid level", defaults, Figures{Requests: 100, Errors: 30, ErrorKinds: map[string]int{"http_503": 30}}, "errors", ""},
		{"5% errors pass", defaults, Figures{Requests: 100, Errors: 5, Valid: true}, "", ""},
		{"preemptions", defaults, Figures{Requests: 100, Valid: true, Server: &ServerFigures{Preemptions: f(3)}}, "kv", ""},
		{"kv errors", defaults, Figures{Requests: 100, Errors: 2, Valid: true, ErrorKinds: map[string]int{"kv_cache_full": 2}}, "kv", ""},
		{"kv usage", []Criterion{{Kind: "kv-usage", Limit: 0.95}}, Figures{Valid: true, Server: &ServerFigures{KVUsageMean: f(0.97), KVUsageMax: f(1)}}, "kv-usage", ""},
		{"goodput", []Criterion{{Kind: "goodput", Limit: 0.99}}, valid, "goodput", ""},
		{"open-loop overload", nil, Figures{Rate: 10, RequestS: 6}, "overload", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failed, ev, invalid := Judge(tc.crit, tc.l)
			if strings.Join(failed, ",") != tc.failed || !strings.Contains(invalid, tc.invalid) || (tc.invalid == "" && invalid != "") {
				t.Errorf("Judge = %v %v %q; want failed %q invalid …%s…", failed, ev, invalid, tc.failed, tc.invalid)
			}
			if len(failed) != len(ev) {
				t.Errorf("%d failed, %d evidence lines", len(failed), len(ev))
			}
		})
	}
}

// defaults are record's default search criteria.
var defaults = []Criterion{{Kind: "errors", Limit: 0.05}, {Kind: "kv"}}

func f(v float64) *float64 { return &v }
