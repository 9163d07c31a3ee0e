package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/realserver"
)

// TestShardedSweepEqualsOneClientRealLlama is TestShardedSweepEqualsOneClient
// against real llama.cpp: three shard processes (JOB_COMPLETION_INDEX set as the
// Indexed Job sets it) and a single client record one sweep, and the merged run
// must be the same experiment: every level valid at its whole concurrency, no
// shard found late, slow or out of step, its output throughput within 5% of the
// single client's, its TTFT and TPOT medians inside the single client's
// bootstrap intervals.
//
// A real server's throughput is what the machine gives it, so the comparison
// is built to measure the sharding rather than the machine:
//   - the server is the d768 model (memory-bound, about 30 ms a decode step on
//     one core) decoding with one thread (-t 1): its compute bounds the
//     throughput, not the clients (with the d64 model at 1.7 ms a token one
//     client process on a loaded machine could not read its three streams fast
//     enough, and three shard processes beat it by 40%: the limit sharding is
//     for, but not what this test compares);
//   - every request has one length (--ignore-eos) and the levels are multiples
//     of 3, so that every shard carries an equal share; each recording draws
//     its own prompts, so that llama-server's per-slot prompt cache serves none
//     of them better;
//   - the single client is recorded before and after the shards, and its two
//     runs give the server's own run-to-run spread. The merged run's throughput
//     is held to within 5% of their mean, or within half their spread where
//     that is wider (it then differs from the single client no more than the
//     single client differs from itself); its TTFT and TPOT medians to the
//     single client's two bootstrap intervals, from the lowest bound to the
//     highest, widened by the two runs' own difference of that median or by 5%
//     of it, whichever is more (a
//     bootstrap interval says how well one run knows its median, not how far
//     the next run's falls: a third run inside the hull of two others'
//     intervals alone would be a coin toss);
//   - where the single client's two runs disagree by more than 15% in
//     throughput the machine was too disturbed to judge, and the trio is
//     recorded again;
//   - a machine never quiet enough to judge is, like a missing llama-server,
//     a skip with the figures outside CI and a failure with CI=true: it proves
//     nothing either way.
//
// Measured on the 2-core machine this was written on (shared with other test
// runs, load average 1-2.5), three runs of this test in a row: the merged
// throughput -1.1% and +4.3%, -1.0% and +1.8%, then -0.1% and -7.8% (a failed
// attempt, recorded again: -0.9% and +1.5%) from the single client's mean at
// c=3 and c=6. Recording the two ways at the same time against two or three
// identical servers (pinned to one CPU or not) was tried first and is worse:
// two identical single clients recorded at the same moment differed by up to
// 35%.
func TestShardedSweepEqualsOneClientRealLlama(t *testing.T) {
	if testing.Short() {
		t.Skip("real llama.cpp test skipped in -short mode")
	}
	// 6 slots sharing one cache (--kv-unified) of 768 tokens: a request holds
	// about 75 (32 prompt tokens, the chat template's, 32 output). With 8 slots
	// each owning 1024 of 8192 tokens, one client's sweep ran c=3 at about 75
	// or about 110 tok/s (TPOT 36-42 or 24-26 ms), slow whenever it came right
	// after the shards' sweep, whose requests had used other slots than its own;
	// with one small shared cache a single client recorded right after the
	// shards ran at 105 tok/s, as before them (104).
	srv := realserver.Start(t, realserver.Options{Slots: 6, Context: 768, Unified: true, Threads: 1, Model: realserver.ModelPath(t, "d768")})
	sweep := []string{"--concurrency", "3,6", "--duration-per-level", "10s",
		"--prompt-tokens", "32", "--output-tokens", "32", "--ignore-eos", "--metrics-url", "off"}
	// Two attempts, as TestShardedSweepEqualsOneClient makes: a machine that
	// disturbed one recording may let the next through.
	var failures, disturbed []string
	for attempt := 1; attempt <= 2; attempt++ {
		failures, disturbed = realShardedVersusOne(t, srv.URL, sweep)
		if len(failures) == 0 && len(disturbed) == 0 {
			return
		}
		t.Logf("attempt %d: %s", attempt, strings.Join(slices.Concat(failures, disturbed), "; "))
	}
	for _, f := range failures {
		t.Error(f)
	}
	if len(failures) > 0 {
		return
	}
	if os.Getenv("CI") != "true" {
		t.Skipf("the machine was too disturbed to compare anything (the single client disagreed with itself): %s", strings.Join(disturbed, "; "))
	}
	for _, d := range disturbed {
		t.Error(d)
	}
}

// recordOne records sweep as one client, in its own process as every shard is.
func recordOne(t *testing.T, url string, sweep []string) analyze.Run {
	t.Helper()
	out := filepath.Join(t.TempDir(), "single.parquet")
	one := exec.Command(os.Args[0], append([]string{"record", "--url", url, "-o", out}, sweep...)...)
	one.Env = append(os.Environ(), "CEILING_TEST_MAIN=1")
	if b, err := one.CombinedOutput(); err != nil {
		t.Fatalf("single client: %v\n%s", err, b)
	}
	return analyzeJSON(t, out)
}

// realShardedVersusOne records one client, the three shards and one client
// again. failures say where the merged run is not the single client's
// experiment at a level the single client's two runs agree on; disturbed says
// where they did not agree, so that the level could not be judged.
func realShardedVersusOne(t *testing.T, url string, sweep []string) (failures, disturbed []string) {
	t.Helper()
	// Each recording draws its own prompts: llama-server keeps each slot's last
	// prompt and routes a request to the slot whose cache it matches best, so a
	// run that repeated an earlier run's prompts would not load it the same way.
	seed := fmt.Sprint(time.Now().UnixNano())
	a := recordOne(t, url, append(sweep, "--seed", seed+"1"))
	merged, findings := shardedSweep(t, url, 3, -1, 0, append(sweep, "--seed", seed+"2")...)
	c := recordOne(t, url, append(sweep, "--seed", seed+"3"))
	m := analyzeJSON(t, merged)
	if len(m.Levels) != 2 || len(a.Levels) != 2 || len(c.Levels) != 2 {
		t.Fatalf("levels: merged %d, single client %d and %d; want 2", len(m.Levels), len(a.Levels), len(c.Levels))
	}
	// llama-server sends no Date header, so the shards cannot measure their
	// clocks against it (the merge says so); on one machine they share a clock.
	for _, kind := range []string{"after the first shard", "workers busy", "requests/s of its", "ran together for only"} {
		if strings.Contains(findings, kind) {
			failures = append(failures, "the merge found the shards out of step: "+findings)
			break
		}
	}
	for i, ml := range m.Levels {
		al, cl := a.Levels[i], c.Levels[i]
		mean := (al.OutputTokS + cl.OutputTokS) / 2
		spread := math.Abs(al.OutputTokS-cl.OutputTokS) / mean
		t.Logf("c=%d: merged %.1f tok/s, single client %.1f before and %.1f after (merged %+.1f%% from their mean, they %.1f%% apart); TTFT p50 merged %.2f ms, single %.2f and %.2f ms; TPOT p50 merged %.3f ms, single %.3f and %.3f ms",
			ml.Concurrency, ml.OutputTokS, al.OutputTokS, cl.OutputTokS, 100*(ml.OutputTokS-mean)/mean, 100*spread,
			1e3*deref(ml.TTFT.P50), 1e3*deref(al.TTFT.P50), 1e3*deref(cl.TTFT.P50),
			1e3*deref(ml.TPOT.P50), 1e3*deref(al.TPOT.P50), 1e3*deref(cl.TPOT.P50))
		if !ml.Valid {
			failures = append(failures, fmt.Sprintf("merged c=%d invalid: %s", ml.Concurrency, ml.InvalidReason))
		}
		if spread > 0.15 {
			disturbed = append(disturbed, fmt.Sprintf("c=%d: the single client's two runs gave %.1f and %.1f tok/s (%.1f%% apart): too disturbed to judge", ml.Concurrency, al.OutputTokS, cl.OutputTokS, 100*spread))
			continue
		}
		tol := math.Max(0.05, spread/2)
		if d := math.Abs(ml.OutputTokS-mean) / mean; d > tol {
			failures = append(failures, fmt.Sprintf("c=%d: merged %.1f tok/s, the single client %.1f and %.1f (%.1f%% from their mean, want within %.1f%%)", ml.Concurrency, ml.OutputTokS, al.OutputTokS, cl.OutputTokS, 100*d, 100*tol))
		}
		for _, q := range []struct {
			name      string
			got, x, y *float64
			xi, yi    *analyze.Interval
		}{
			{"TTFT p50", ml.TTFT.P50, al.TTFT.P50, cl.TTFT.P50, ciOf(al, "ttft"), ciOf(cl, "ttft")},
			{"TPOT p50", ml.TPOT.P50, al.TPOT.P50, cl.TPOT.P50, ciOf(al, "tpot"), ciOf(cl, "tpot")},
		} {
			if q.xi == nil || q.yi == nil {
				failures = append(failures, fmt.Sprintf("c=%d: the single client has no bootstrap interval of %s (too few requests?)", ml.Concurrency, q.name))
				continue
			}
			// Widened by the run-to-run difference, and at least by the 5% the
			// throughput is held to: three client processes beside a one-thread
			// server on 2 cores take CPU one client does not, which moved the
			// medians 3-8% in CI under -race while the throughput stayed within 5%.
			d := math.Max(math.Abs(deref(q.x)-deref(q.y)), 0.05*(deref(q.x)+deref(q.y))/2)
			lo, hi := math.Min(q.xi.Low, q.yi.Low)-d, math.Max(q.xi.High, q.yi.High)+d
			if v := deref(q.got); v < lo || v > hi {
				failures = append(failures, fmt.Sprintf("c=%d: merged %s %.3f ms outside the single client's intervals widened by its run-to-run difference (at least 5%%), %.3f–%.3f ms", ml.Concurrency, q.name, 1e3*v, 1e3*lo, 1e3*hi))
			}
		}
	}
	return failures, disturbed
}

// ciOf is the level's bootstrap interval of the TTFT or TPOT median.
func ciOf(l analyze.Level, metric string) *analyze.Interval {
	if l.CI == nil {
		return nil
	}
	if metric == "ttft" {
		return l.CI.TTFTP50
	}
	return l.CI.TPOTP50
}
