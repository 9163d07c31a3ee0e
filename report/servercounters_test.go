package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// TestServerEvidenceAndErrorBars: a run with server counters, a KV check, an invalid
// level and bootstrap intervals shows the counters table in the evidence, the KV check
// in the capacity section, the invalid level listed and drawn hollow grey, and error
// bars on the throughput and TTFT charts; a run without them shows none of it.
func TestServerEvidenceAndErrorBars(t *testing.T) {
	for _, with := range []bool{true, false} {
		a := fixture(6, 40)
		r := &a.Runs[0]
		if with {
			f := func(v float64) *float64 { return &v }
			for i := range r.Levels {
				l := &r.Levels[i]
				l.Server = &analyze.ServerCounters{Engine: "vllm", Scrapes: 9, RunningMean: f(3.5), RunningMax: f(4),
					WaitingMean: f(1.25), WaitingMax: f(3), KVUsageMean: f(0.42), KVUsageMax: f(0.97), Preemptions: f(7)}
				l.CI = &analyze.LevelCI{OutputTokS: &analyze.Interval{Low: 0.9 * l.OutputTokS, High: 1.1 * l.OutputTokS},
					TTFTP50: &analyze.Interval{Low: 0.01, High: 0.02}, TTFTP99: &analyze.Interval{Low: 0.03, High: 0.05}}
			}
			r.Levels[0].Valid, r.Levels[0].InvalidReason = false, "too few completions to measure"
			m, d, o := int64(1000), int64(1100), int64(400)
			yes := false
			r.KVCheck = &analyze.KVCheck{ModelledTokens: &m, DeclaredTokens: &d, ObservedTokens: &o, Tolerance: 0.25, Agree: &yes, Verdict: "observed is far below"}
		}
		var buf bytes.Buffer
		if err := Write(&buf, a, Options{Tool: "test"}); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		for _, want := range []string{
			"The server's counters beside the client's", "3.5 / 4", "42% / 97%",
			"KV capacity check: modelled 1,000 tokens · declared by the server 1,100 tokens · observed 400 tokens: they DISAGREE by more than 25%",
			"Invalid levels (hollow grey markers", "too few completions to measure",
			`"emptyCircle"`, "95% CI", "p99 95% CI",
		} {
			if got := strings.Contains(page, want); got != with {
				t.Errorf("with=%v: page contains %q = %v", with, want, got)
			}
		}
	}
}
