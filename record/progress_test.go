package record

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

func TestQuantile(t *testing.T) {
	v := []float64{4, 1, 3, 2} // unsorted on purpose
	for _, tt := range []struct{ q, want float64 }{
		{0, 1}, {0.5, 2.5}, {1, 4}, {0.99, 3.97}, {0.25, 1.75},
	} {
		if got := quantile(v, tt.q); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("quantile(%v, %v) = %v, want %v (numpy's linear)", v, tt.q, got, tt.want)
		}
	}
	if v[0] != 4 {
		t.Error("quantile sorted its input in place")
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("quantile of nothing is not 0")
	}
}

func TestProgressLine(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	n := func(v int32) *int32 { return &v }
	boom := "boom"
	s := newLevelStats(level{index: 2, concurrency: 8}, 4, 6, nil, false)
	s.add(&trace.Row{Warmup: true, SentNs: 0, EndNs: 5e9, OutputTokens: n(1000)})
	s.add(&trace.Row{SentNs: 1e9, FirstTokenNs: p(1.2e9), EndNs: 2e9, OutputTokens: n(100)})
	s.add(&trace.Row{SentNs: 1e9, FirstTokenNs: p(1.4e9), EndNs: 3e9, OutputTokens: n(300)})
	s.add(&trace.Row{SentNs: 1e9, EndNs: 1e9, Error: &boom})
	want := "level 2 (3 of 6)  c=8  4/4 req  200.0 tok/s  p50 TTFT 0.30s  1 errors  most errors (1): boom"
	if got := s.lineAt(s.started); got != want {
		t.Errorf("progress line\n  %s\nwant\n  %s", got, want)
	}
	if s.measured != 3 || s.errors != 1 {
		t.Errorf("measured %d, errors %d; want 3 and 1 (the warm-up left out)", s.measured, s.errors)
	}
	open := newLevelStats(level{index: 0, rate: 2.5}, 0, 0, nil, false)
	if got := open.lineAt(open.started); !strings.HasPrefix(got, "level 0  rate=2.5/s  0 req") || !strings.Contains(got, "p50 TTFT -") {
		t.Errorf("open-loop line before any request: %q", got)
	}
}

// TestProgressNamesTheServersError (issue 24, item 3): the line gives the most
// frequent error in the server's own words, on one line and cut short, not only a
// count: llama.cpp's "exceeds the available context size" explained 6,799 failures
// that "http_400" did not.
func TestProgressNamesTheServersError(t *testing.T) {
	s := newLevelStats(level{index: 0, concurrency: 4}, 10, 1, nil, false)
	// As the client records llama.cpp's answer (httpErrorText).
	text := func(n int) *string {
		e := fmt.Sprintf("HTTP 400 Bad Request: request (%d tokens) exceeds the available context size (128 tokens), try increasing it", n)
		return &e
	}
	other := "connection reset by peer"
	for _, e := range []*string{text(256), &other, text(300), text(212)} {
		s.add(&trace.Row{SentNs: 1e9, EndNs: 1e9, Error: e})
	}
	line := s.lineAt(s.started)
	want := "most errors (3): HTTP 400 Bad Request: request (256 tokens) exceeds the available context size (128 tokens), try incr…"
	if !strings.HasSuffix(line, want) {
		t.Errorf("line\n  %s\nwant it to end with\n  %s", line, want)
	}
	for i := range 100 { // a server answering each request differently
		e := fmt.Sprintf("error %c", 'A'+i)
		s.add(&trace.Row{SentNs: 1e9, EndNs: 1e9, Error: &e})
	}
	if len(s.errorTexts) > errorTextKinds {
		t.Errorf("%d error texts kept, want at most %d", len(s.errorTexts), errorTextKinds)
	}
}

// TestProgressTargetAndETA: the line shows the level's target and, as it runs, the
// time left in the level and the sweep; once the level ended, what it took.
func TestProgressTargetAndETA(t *testing.T) {
	t0 := time.Unix(1000, 0)
	left := 90 * time.Second
	for _, tc := range []struct {
		name string
		plan levelPlan
		at   time.Duration // after the level started
		end  bool
		want string
	}{
		{"count, first level", levelPlan{target: "target 64 req", later: 4, left: func(time.Time) (time.Duration, bool) { return left, true }}, 30 * time.Second, false,
			"target 64 req  0/64 req  0.0 tok/s  p50 TTFT -  0 errors  ETA level 1:30, sweep 9:30"},
		{"default size, levels before", levelPlan{target: "target ≥10 req in ≥30s steady", later: 2, perLevel: 3 * time.Minute, left: func(time.Time) (time.Duration, bool) { return 20 * time.Second, true }}, 10 * time.Second, false,
			"ETA level 0:20, sweep 6:20"},
		{"not known yet", levelPlan{target: "target ≥10 req in ≥30s steady", later: 2, left: func(time.Time) (time.Duration, bool) { return 0, false }}, time.Second, false,
			"ETA level -"},
		{"auto: no sweep estimate", levelPlan{later: -1, left: func(time.Time) (time.Duration, bool) { return 5 * time.Second, true }}, time.Second, false,
			"  0 errors  ETA level 0:05"},
		{"ended", levelPlan{target: "target 64 req", later: 1, left: func(time.Time) (time.Duration, bool) { return left, true }}, 75 * time.Second, true,
			"  0 errors  took 1:15, sweep 1:15"},
		{"last level ended", levelPlan{later: 0, left: func(time.Time) (time.Duration, bool) { return left, true }}, 3725 * time.Second, true,
			"  0 errors  took 1:02:05"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newLevelStats(level{index: 0, concurrency: 8}, 64, 5, nil, false)
			s.started = t0
			s.setPlan(tc.plan)
			if tc.plan.target == "" {
				s.count = 0
			}
			now := t0.Add(tc.at)
			if tc.end {
				s.ended = now
			}
			got := s.lineAt(now)
			if !strings.HasSuffix(got, tc.want) && !strings.Contains(got, tc.want) {
				t.Errorf("line\n  %s\nwant it to contain\n  %s", got, tc.want)
			}
			if tc.end && strings.Contains(got, "ETA") || !tc.end && !strings.Contains(got, "ETA level") {
				t.Errorf("line %q: an ETA while running, none once ended", got)
			}
		})
	}
}

// TestProgressShowsTargetAndETAWhileRecording records a default-sized level on a
// terminal (the line rewritten every 250 ms) and a counted one: the lines carry
// the target and an ETA that counts down.
func TestProgressShowsTargetAndETAWhileRecording(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 20 * time.Millisecond, TokenGap: 10 * time.Millisecond, Slots: 8})
	defer eng.Close()
	var buf syncBuffer
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{2, 4}
	o.RequestsPerLevel = 0
	o.OutputTokens = 12
	o.IgnoreEOS = true
	o.steadyState = 1500 * time.Millisecond
	o.MetricsURL = "off"
	o.Progress, o.Live = &buf, true
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	var etas []string
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", "\n"), "\n") {
		if strings.HasPrefix(line, "level 0 (1 of 2)") && strings.Contains(line, "ETA level 0:") {
			etas = append(etas, line)
		}
	}
	if len(etas) < 2 {
		t.Fatalf("fewer than 2 progress lines of level 1 with an ETA:\n%s", out)
	}
	for _, w := range []string{"target ≥10 req in ≥1.5s steady", ", sweep "} {
		if !strings.Contains(etas[0], w) {
			t.Errorf("line %q lacks %q", etas[0], w)
		}
	}
	if !strings.Contains(out, "took 0:0") {
		t.Errorf("no final line with the level's duration:\n%s", out)
	}
	t.Logf("first: %s\nlast: %s", strings.TrimSpace(strings.Split(etas[0], "\x1b")[0]), strings.TrimSpace(strings.Split(etas[len(etas)-1], "\x1b")[0]))
}

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
