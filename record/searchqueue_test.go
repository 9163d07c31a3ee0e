package record

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestRecordSearchStepsDownWhenTheServerQueues is issue 27's "search that spends
// minutes judging nothing": a vLLM-like engine with 8 request slots (max_num_seqs,
// which vLLM does not publish) and a KV cache declared for 285 requests of 128 +
// 96 tokens. The search starts at 285; the server runs 8 and queues the rest (its
// num_requests_running and num_requests_waiting say so), so the level cannot be
// valid. The search must step down to 8 at once, never re-run 285 longer, and
// answer 8 bound by the server's batch, in a few levels.
func TestRecordSearchStepsDownWhenTheServerQueues(t *testing.T) {
	const prompt, output = 128, 96
	eng := enginetest.New(enginetest.Config{Model: "m", Scheduler: "vllm", Kind: "vllm", Slots: 8,
		KVTokens: 285*(prompt+output) + 64, StepTime: 2 * time.Millisecond})
	defer eng.Close()
	o := searchOptions(t, eng.URL())
	o.PromptTokens, o.OutputTokens = prompt, output
	o.ScrapeInterval = 100 * time.Millisecond
	o.Timeout = 5 * time.Minute // requests wait behind the 8 running: not a timeout
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s := info.Search
	if s == nil || !s.Done {
		t.Fatalf("search %+v", s)
	}
	p := path(info.Levels)
	if len(info.Levels) < 2 || info.Levels[0].Concurrency != 285 || info.Levels[1].Concurrency != 8 {
		t.Errorf("path%s: want 285 (the declared capacity), then 8 (what the server ran)", p)
	}
	for _, l := range info.Levels {
		if l.Search.Phase == "rerun" {
			t.Errorf("a level was re-run longer: path%s", p)
		}
	}
	if s.Ceiling != 8 || s.Bound != "batch" || len(info.Levels) > 4 {
		t.Errorf("answer %q in %d levels (path%s): want 8 bound by batch in at most 4", s.Answer, len(info.Levels), p)
	}
	if !strings.Contains(s.Answer, "the server ran at most 8 requests at once") {
		t.Errorf("answer %q does not name the server's counters", s.Answer)
	}
	t.Logf("%s; path%s", s.Answer, p)
	for _, l := range info.Levels {
		t.Logf("c=%d %s: %q %q queued %g waiting %g", l.Concurrency, l.Search.Verdict, l.Search.Invalid, l.Search.Evidence, l.Search.Queued, l.Search.Waiting)
	}
}

// TestRecordSearchUnderInterference: the batch-bound engine (8 slots) slowed by a
// busy machine's interference (every gap 0-25% longer, changing every 250 ms),
// searched twice with different interference: both answers lie within the
// resolution of the slot count.
func TestRecordSearchUnderInterference(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 100 * time.Millisecond, TokenGap: 10 * time.Millisecond, Slots: 8,
			Noise: 0.25, NoisePeriod: 250 * time.Millisecond, NoiseSeed: seed})
		o := searchOptions(t, eng.URL())
		info, err := Record(context.Background(), o)
		eng.Close()
		if err != nil {
			t.Fatal(err)
		}
		s := info.Search
		if s == nil || !s.Done || math.Abs(s.Ceiling-8) > 1 {
			t.Errorf("seed %d: answer %+v; path%s: want 8 (±1)", seed, s, path(info.Levels))
			continue
		}
		t.Logf("seed %d: %s; path%s", seed, s.Answer, path(info.Levels))
	}
}

// TestRecordSearchNoPassingLevel (issue 31 item 12): a server that fails half its
// requests at every level: no level passes the error criterion, so the search
// must say it found no ceiling and return ErrNoCeiling, keeping its levels, never
// answer a ceiling.
func TestRecordSearchNoPassingLevel(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 20 * time.Millisecond, TokenGap: 2 * time.Millisecond, Slots: 4,
		Fault: func(i int64) enginetest.Fault {
			if i >= 5 && i%2 == 1 { // the pre-flight requests first
				return enginetest.FaultInternal
			}
			return enginetest.FaultNone
		}})
	defer eng.Close()
	o := searchOptions(t, eng.URL())
	o.SearchStart = 8
	info, err := Record(context.Background(), o)
	if !errors.Is(err, ErrNoCeiling) {
		t.Fatalf("error %v, want ErrNoCeiling", err)
	}
	s := info.Search
	if s == nil || !s.Done || s.Ceiling != 0 || !strings.HasPrefix(s.Answer, "no ceiling found: no level passed") {
		t.Errorf("search %+v: want no ceiling", s)
	}
	if len(info.Levels) == 0 {
		t.Error("the levels the search ran were not kept")
	}
	t.Logf("%s; path%s", s.Answer, path(info.Levels))
}
