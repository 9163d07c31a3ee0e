package main

import (
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/internal/realserver"
)

// TestRealLlamaSearchMatchesFineLadder: against a real llama-server, the answer of
// `record --concurrency auto` equals the answer of a fine manual ladder (every
// concurrency from 1 to 8) judged afterwards on analyze's figures by the same
// criterion, within the search's resolution.
//
// The criterion must have a sharp boundary on a real server whatever the machine's
// load, or the two recordings disagree by noise (a throughput knee on a loaded
// 2-core machine answered 9 for the search and 3 for the ladder). With -np 4 slots
// and requests of fixed length (--ignore-eos), no request waits for a slot up to 4
// concurrent requests, so its TTFT is a prefill; from 5, one request in five (or
// more) waits for a slot to free, which takes about a whole request. TTFT p90 jumps
// from milliseconds to a request's duration between 4 and 5, so a target between
// the two binds at exactly the slot count. The target is a measured c=1 request's
// median duration (E2E p50): a request in a batch of 4 lasts longer than alone, so
// the wait above the slots exceeds it, while a prefill is an order of magnitude
// shorter; a load that slows the machine slows both sides alike.
func TestRealLlamaSearchMatchesFineLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("real-server test skipped in -short mode")
	}
	const slots = 4
	srv := realserver.Start(t, realserver.Options{Slots: slots})
	dir := t.TempDir()
	// The recordings run in a binary built without the race detector: `make test`
	// runs with -race, whose client on 2 cores shared with llama-server's 2
	// threads added hundreds of ms to TTFTs at c ≤ 4, so no boundary was sharp.
	bin := filepath.Join(dir, "ceiling")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runBin := func(args ...string) (stdout, stderr string) {
		var o, e bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("ceiling %s: %v\n%s", strings.Join(args, " "), err, e.String())
		}
		return o.String(), e.String()
	}
	workload := []string{"--prompt-tokens", "64", "--output-tokens", "64", "--ignore-eos", "--warmup", "2",
		"--requests-per-level", "40", "--scrape-interval", "500ms"}
	record := func(name string, args ...string) string {
		out := filepath.Join(dir, name+".parquet")
		runBin(append(append([]string{"record", "--url", srv.URL, "-o", out}, workload...), args...)...)
		return out
	}

	// The target from a measured c=1 level (which also warms the server up).
	one := analyzeRunJSON(t, record("one", "--concurrency", "1"))
	if len(one.Levels) != 1 || one.Levels[0].E2E.P50 == nil {
		t.Fatalf("c=1 level: %+v", one.Levels)
	}
	target := time.Duration(*one.Levels[0].E2E.P50 * float64(time.Second)).Round(100 * time.Microsecond)
	slo := "p90:" + target.String()
	t.Logf("target TTFT p90 <= %s (the median c=1 request)", target)

	// The ladder, judged afterwards: the ceiling is the level below the first that
	// misses the target, as the search's criterion judges a level.
	var ladder []string
	for c := 1; c <= 2*slots; c++ {
		ladder = append(ladder, strconv.Itoa(c))
	}
	lr := analyzeRunJSON(t, record("ladder", "--concurrency", strings.Join(ladder, ",")))
	ladderCeiling, ladderPath := 0.0, ""
	for _, l := range lr.Levels {
		p90 := l.TTFT.P90
		ladderPath += fmt.Sprintf(" c=%d:%s", l.Concurrency, fmtPtr(p90))
		if ladderCeiling < float64(l.Concurrency)-1 {
			continue // above the first failing level
		}
		if p90 != nil && *p90 <= target.Seconds() && l.Valid && l.Errors == 0 {
			ladderCeiling = float64(l.Concurrency)
		}
	}
	t.Logf("ladder TTFT p90:%s -> ceiling %g", ladderPath, ladderCeiling)

	// The search, with the same criterion alone (the knee off: a CPU-bound server's
	// throughput is flat from c=1, which is no answer to this question).
	trace := filepath.Join(dir, "search.parquet")
	stdout, stderr := runBin(append(append([]string{"record", "--url", srv.URL, "-o", trace}, workload...),
		"--concurrency", "auto", "--slo-ttft", slo, "--knee", "off")...)
	sr := analyzeRunJSON(t, trace)
	s := sr.Search
	if s == nil || !s.Done {
		t.Fatalf("search %+v\n%s", s, stderr)
	}
	var path []string
	for _, st := range s.Steps {
		path = append(path, fmt.Sprintf("%g:%s:%s", st.X, st.Phase, st.Verdict))
	}
	t.Logf("search: %s; path %s", s.Answer, strings.Join(path, " "))

	// The search's resolution at its answer: the larger of 10% and 1 request.
	res := math.Max(0.1*s.Ceiling, 1)
	if math.Abs(s.Ceiling-ladderCeiling) > res || s.Hi-s.Lo > res {
		t.Errorf("search answered %g (bracket %g..%g), the fine ladder %g: not within the resolution %g",
			s.Ceiling, s.Lo, s.Hi, ladderCeiling, res)
	}
	// The premise, lest both agree on a meaningless answer: the ladder finds the
	// boundary at the slot count. (A burst of load on the machine during one of the
	// search's levels can still fail it one below, within the resolution.)
	if ladderCeiling != slots {
		t.Errorf("the fine ladder's ceiling is %g, want the %d slots: the TTFT boundary was not sharp", ladderCeiling, slots)
	}
	// The TTFT target binds (beside the batch, which the server's own counters
	// show at the first level above its 4 slots).
	if !strings.Contains(s.Bound, "ttft p90") || !strings.Contains(stdout+stderr, s.Answer) {
		t.Errorf("bound %q, want ttft p90 among the bounds; answer %q in the live output:\n%s", s.Bound, s.Answer, stderr)
	}
}
