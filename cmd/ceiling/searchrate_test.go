package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestRecordRateAutoFindsServiceRate: `record --rate auto` end to end against the
// test engine with a known truth. The engine serves 4 requests at a time, each for
// TTFT + (output − 1) × gap; its service rate is μ = slots ÷ that duration. With
// near-regular arrivals (--burstiness 100: intervals within ~10% of the mean) below
// μ a request finds a free slot and its TTFT is the engine's; above μ the queue
// grows all level, so the p95 TTFT of a level of N requests at λ exceeds the
// engine's by a queue wait of about 0.95·N·(1/μ − 1/λ): with the target 200 ms
// above the engine's TTFT and N = 40, every rate from 1.06 μ on fails. The truth
// is μ, and the search must bracket it within its resolution (10%), name the TTFT
// SLO, print the answer, store the path, and report the latencies corrected for
// coordinated omission beside the uncorrected ones. The engine's times are long
// (a request lasts 400 ms) so that a busy machine's scheduling delays, tens of
// milliseconds, stay well inside the target.
func TestRecordRateAutoFindsServiceRate(t *testing.T) {
	const (
		slots  = 4
		ttft   = 100 * time.Millisecond
		gap    = 20 * time.Millisecond
		output = 16
		n      = 40
	)
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", Slots: slots, TTFT: ttft, TokenGap: gap})
	defer eng.Close()
	duration := ttft + (output-1)*gap
	mu := slots / duration.Seconds()
	target := ttft + 200*time.Millisecond
	// The queue wait that fails the target: 0.95·N·(1/μ − 1/λ) > 200 ms.
	failFrom := mu / (1 - (target-ttft).Seconds()*mu/(0.95*n))
	t.Logf("service rate μ = %.1f/s; the target fails from %.1f/s", mu, failFrom)

	out := filepath.Join(t.TempDir(), "rate.parquet")
	code, stdout, stderr := runCLI("record", "--url", eng.URL(), "--rate", "auto", "--search-start", "8",
		"--slo-ttft", "p95:"+target.String(), "--burstiness", "100", "--requests-per-level", strconv.Itoa(n),
		"--prompt-tokens", "32", "--output-tokens", strconv.Itoa(output), "--warmup", "0", "-o", out)
	if code != exitOK {
		t.Fatalf("record --rate auto: exit %d\n%s", code, stderr)
	}
	live := stdout + stderr

	// The answer line, as printed live.
	m := regexp.MustCompile(`ceiling ([0-9.]+) requests/s \(bracket ([0-9.]+)\.\.([0-9.]+)\), bound by ([a-z0-9 .]+) at ([0-9.]+): `).FindStringSubmatch(live)
	if m == nil {
		t.Fatalf("no answer line with a bracket in the live output:\n%s", live)
	}
	lo, _ := strconv.ParseFloat(m[2], 64)
	hi, _ := strconv.ParseFloat(m[3], 64)
	if m[4] != "ttft p95" || m[1] != m[2] || m[3] != m[5] {
		t.Errorf("answer %q: want the ceiling at the bracket's lower end, bound by ttft p95 at its upper end", m[0])
	}
	if hi-lo > 0.1*lo+1e-9 {
		t.Errorf("bracket %g..%g wider than the resolution (10%%)", lo, hi)
	}
	if lo > failFrom || hi < mu || math.Abs(lo-mu) > 0.1*mu {
		t.Errorf("bracket %g..%g: want it around the service rate %.1f/s (failing from %.1f/s), within 10%%", lo, hi, mu, failFrom)
	}

	// The path, from analyze --format json: the same answer, every level a step
	// with its verdict, the bracket after the last one.
	var a analyze.Analysis
	js := ceiling(t, "analyze", "--format", "json", out)
	if err := json.Unmarshal([]byte(js), &a); err != nil || len(a.Runs) != 1 {
		t.Fatalf("analysis JSON (%v):\n%s", err, js)
	}
	r := a.Runs[0]
	p := r.Search
	if p == nil || !p.Done || p.Unit != "requests/s" || !strings.Contains(live, p.Answer) || p.Lo != lo || p.Hi != hi {
		t.Fatalf("analyze's search %+v: want the live answer, done, in requests/s", p)
	}
	// Open loop: no knee unless asked (a level's throughput is its offered rate).
	for _, c := range p.Criteria {
		if strings.HasPrefix(c, "knee") {
			t.Errorf("criteria %q: the knee is on in open loop without --knee", p.Criteria)
		}
	}
	if len(p.Steps) != len(r.Levels) || len(p.Steps) < 3 {
		t.Fatalf("%d steps for %d levels", len(p.Steps), len(r.Levels))
	}
	var path []string
	for i, s := range p.Steps {
		l := r.Levels[i]
		path = append(path, fmt.Sprintf("%g:%s:%s(ttft p50 %s p95 %s)", s.X, s.Phase, s.Verdict, fmtPtr(l.TTFT.P50), fmtPtr(l.TTFT.P95)))
		// Every level's verdict follows from the truth: pass below μ, fail from failFrom.
		switch {
		case s.X < 0.9*mu && s.Verdict != "pass", s.X >= failFrom && s.Verdict != "fail":
			t.Errorf("step %d at %g/s: %s %v (service rate %.1f/s)", i, s.X, s.Verdict, s.Evidence, mu)
		}
		if r.Levels[i].Rate != s.X {
			t.Errorf("step %d at %g/s, its level at %g/s", i, s.X, r.Levels[i].Rate)
		}
	}
	t.Logf("path %s -> %s", strings.Join(path, " "), p.Answer)
	if first := p.Steps[0]; first.X != 8 || first.Phase != "start" {
		t.Errorf("first step %+v, want the start at --search-start 8", first)
	}
	if last := p.Steps[len(p.Steps)-1]; last.Lo != lo || last.Hi != hi {
		t.Errorf("last step's bracket %g..%g, the answer's %g..%g", last.Lo, last.Hi, lo, hi)
	}

	// Open loop: the latencies from the scheduled send (corrected for coordinated
	// omission) beside those from the actual send, at every level, never shorter;
	// at a failing level the queue shows in both.
	for _, l := range r.Levels {
		co, e2e := l.TTFTFromScheduled, l.E2EFromScheduled
		if co == nil || e2e == nil || co.N != l.TTFT.N || co.P50 == nil || l.TTFT.P50 == nil {
			t.Fatalf("level %d (%g/s): no corrected TTFT/E2E beside the uncorrected (%+v)", l.Level, l.Rate, co)
		}
		if *co.P50 < *l.TTFT.P50-1e-9 || *e2e.P99 < *l.E2E.P99-1e-9 {
			t.Errorf("level %d: corrected TTFT p50 %g / E2E p99 %g below the uncorrected %g / %g", l.Level, *co.P50, *e2e.P99, *l.TTFT.P50, *l.E2E.P99)
		}
	}
	text := ceiling(t, "analyze", out)
	for _, w := range []string{"Ceiling search", p.Answer, "TTFT p99 sched", "corrected for coordinated omission"} {
		if !strings.Contains(text, w) {
			t.Errorf("analyze's text lacks %q", w)
		}
	}
}
