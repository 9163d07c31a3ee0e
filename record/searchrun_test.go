package record

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/analyze/analysistext"
	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// searchOptions is a fast search against an engine: levels sized by the default
// rule with a short steady state, so that each is valid.
func searchOptions(t *testing.T, url string) Options {
	o := baseOptions(t, url)
	o.OutputTokens = 32 // 320 ms at 10 ms a token: the client's overhead per request is small beside it
	o.Concurrency, o.Auto, o.RequestsPerLevel = nil, true, 0
	o.Analyzer = analyze.SearchFigures
	o.steadyState = 600 * time.Millisecond
	return o
}

// TestRecordSearchBatchBound: 4 slots, the throughput flat beyond them, no capacity
// declared: the search ramps from 1 and brackets the knee at 4.
func TestRecordSearchBatchBound(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 200 * time.Millisecond, TokenGap: 10 * time.Millisecond, Slots: 4})
	defer eng.Close()
	o := searchOptions(t, eng.URL())
	var progress strings.Builder
	o.Progress = &progress
	if testing.Verbose() {
		o.Progress = io.MultiWriter(&progress, os.Stderr)
	}
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := info.Search
	if s == nil || !s.Done {
		t.Fatalf("search result %+v", s)
	}
	// The truth is 4; the resolution 1 request.
	// Bound by the knee at the ceiling itself (flat from it on: kneerule), or by
	// a knee in a bracket one request wide.
	exact := strings.HasPrefix(s.Answer, fmt.Sprintf("ceiling %g concurrent requests, bound by the knee: from %g ", s.Lo, s.Lo))
	if math.Abs(s.Ceiling-4) > 1 || (!exact && s.Hi-s.Lo > 1) || s.Bound != "knee" {
		t.Errorf("answer %q: want ceiling 4 (±1) bound by knee", s.Answer)
	}
	if !strings.Contains(progress.String(), s.Answer) || !strings.Contains(info.StopReason, s.Answer) {
		t.Errorf("the answer is not in the live output:\n%s", progress.String())
	}
	// Every level is an ordinary sealed level with its judgement.
	_, merged := readTrace(t, o.Output)
	if merged.Search == nil || merged.Search.Answer != s.Answer || merged.Plan.Search == nil {
		t.Fatalf("trace search %+v, plan %+v", merged.Search, merged.Plan.Search)
	}
	for _, l := range merged.Levels {
		if l.Search == nil || l.Search.Verdict == "pending" {
			t.Errorf("level %d (c=%d) has no verdict: %+v", l.Level, l.Concurrency, l.Search)
		}
		if l.Concurrency > 16 {
			t.Errorf("level c=%d: the search ramped two doublings past the knee", l.Concurrency)
		}
	}
	// analyze shows the same answer and the path.
	a, err := analyze.Analyze(context.Background(), []string{o.Output}, analyze.Options{Resamples: -1, TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := a.Runs[0].Search
	if p == nil || p.Answer != s.Answer || len(p.Steps) != len(merged.Levels) {
		t.Fatalf("analyze's search %+v, want the answer %q and %d steps", p, s.Answer, len(merged.Levels))
	}
	// One answer per run: analyze, judging by the criteria the search stored,
	// headlines what the search answered.
	if c := a.Runs[0].Ceiling; c.Concurrency == nil || *c.Concurrency != s.Ceiling {
		t.Errorf("analyze's realistic ceiling %v (%s), the search's %g: %q", c.Concurrency, c.Binding, s.Ceiling, c.Evidence)
	}
	var text strings.Builder
	if err := analysistext.Write(&text, a, analysistext.FormatText); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Ceiling search") || !strings.Contains(text.String(), s.Answer) {
		t.Errorf("analyze's text lacks the search section or its answer:\n%s", text.String())
	}
	t.Logf("%s\n%s", s.Answer, progress.String())
}

// TestRecordSearchKVLimit: the server declares a KV cache that holds 3 requests:
// the search starts there and never runs beyond it.
func TestRecordSearchKVLimit(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 200 * time.Millisecond, TokenGap: 10 * time.Millisecond, Kind: "sglang", KVTokens: 3 * 92})
	defer eng.Close()
	o := searchOptions(t, eng.URL())
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range info.Levels {
		if l.Concurrency > 3 {
			t.Errorf("level c=%d beyond the 3 requests the KV cache holds", l.Concurrency)
		}
	}
	if info.Levels[0].Concurrency != 3 || info.Levels[0].Search.Phase != "start" {
		t.Errorf("first level c=%d (%s), want the declared capacity 3", info.Levels[0].Concurrency, info.Levels[0].Search.Phase)
	}
	if s := info.Search; s.Ceiling != 3 || s.Bound != "limit" || !strings.Contains(s.Answer, "KV cache") {
		t.Errorf("answer %q (bound %q): want 3, bound by the KV cache", s.Answer, s.Bound)
	}
}

// TestRecordSearchResume: a search killed after its third level continues with
// --resume from the levels sealed (judging the one sealed but not judged), to an
// answer within the resolution of the truth (3 slots), like an uninterrupted one.
func TestRecordSearchResume(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 200 * time.Millisecond, TokenGap: 10 * time.Millisecond, Slots: 3})
	defer eng.Close()
	o := searchOptions(t, eng.URL())
	o.crashAfterLevels = 3
	before, err := Record(context.Background(), o)
	if err == nil {
		t.Fatal("the simulated crash did not stop the recording")
	}
	o.crashAfterLevels, o.Resume = 0, true
	got, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if !got.Levels[i].Started.Equal(before.Levels[i].Started) {
			t.Errorf("level %d was run again on resume", i)
		}
	}
	if s := got.Search; s == nil || !s.Done || math.Abs(s.Ceiling-3) > 1 || s.Bound != "knee" {
		t.Errorf("resumed answer %+v, want 3 (±1) bound by the knee; path %s", s, path(got.Levels))
	}
	_, merged := readTrace(t, o.Output)
	if merged.Search == nil || merged.Search.Answer != got.Search.Answer {
		t.Errorf("the trace's answer %+v differs from the run's %q", merged.Search, got.Search.Answer)
	}
}

func path(levels []trace.LevelInfo) string {
	var b strings.Builder
	for _, l := range levels {
		b.WriteString(" " + fmtX(float64(l.Concurrency)) + ":" + l.Search.Phase + ":" + l.Search.Verdict)
	}
	return b.String()
}

func TestParseResolution(t *testing.T) {
	for _, tc := range []struct {
		in         string
		share, abs float64
		ok         bool
	}{
		{"10%,1", 0.10, 1, true}, {"5%", 0.05, 0, true}, {"2", 0, 2, true}, {"0.5", 0, 0.5, true},
		{"0%", 0, 0, false}, {"100%", 0, 0, false}, {"-1", 0, 0, false}, {"x", 0, 0, false}, {"", 0, 0, false},
	} {
		s, a, err := parseResolution(tc.in)
		if (err == nil) != tc.ok || (tc.ok && (math.Abs(s-tc.share) > 1e-12 || a != tc.abs)) {
			t.Errorf("parseResolution(%q) = %g, %g, %v", tc.in, s, a, err)
		}
	}
}

func TestSearchPointsPoolRepeats(t *testing.T) {
	st := func(v string, tok float64, failed ...string) *trace.SearchStep {
		return &trace.SearchStep{Phase: "ramp", Verdict: v, OutputTokS: tok, OwnFailed: failed, OwnEvidence: failed}
	}
	levels := []trace.LevelInfo{
		{Level: 0, Concurrency: 1, Search: st("pass", 10)},
		{Level: 1, Concurrency: 1, Repeat: 1, Search: st("pass", 12)},
		{Level: 2, Concurrency: 2, Search: st("pass", 20)},
		{Level: 3, Concurrency: 2, Repeat: 1, Search: st("fail", 22, "errors")},
		{Level: 4, Concurrency: 4, Search: st("pending", 0)},
	}
	pts, index := searchPoints(levels, false)
	if len(pts) != 2 || pts[0].tokS != 11 || pts[1].tokS != 21 || len(pts[1].failed) != 1 || len(index[1]) != 2 {
		t.Errorf("points %+v index %v", pts, index)
	}
}

// TestSearchNeedsAnAnalyzer: a search without the figures to judge its levels by
// is refused before it sends a request, naming the field.
func TestSearchNeedsAnAnalyzer(t *testing.T) {
	o := Options{URL: "http://x", Output: "o.parquet", Auto: true}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "Options.Analyzer") {
		t.Errorf("a search without Options.Analyzer: %v", err)
	}
	o.Analyzer = analyze.SearchFigures
	if err := o.Validate(); err != nil {
		t.Errorf("a search with Options.Analyzer: %v", err)
	}
}
