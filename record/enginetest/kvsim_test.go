package enginetest

import (
	"testing"
)

// simRun is what driving a step scheduler to idle did.
type simRun struct {
	steps, tokens, preempted int
	emitted                  map[int64]int // tokens per request
	failed                   []int64
	maxRunning, maxUsed      int
	maxUsage                 float64
	firstPreempted           int64 // id of the first request preempted, -1 if none
}

// drive adds reqs (id i: prompt[i], out[i]) at once and steps until the scheduler is
// idle (at most 100,000 steps: a scheduler that livelocks fails the test).
func drive(t *testing.T, sim kvSim, prompt, out []int) simRun {
	t.Helper()
	reqs := make([]*simReq, len(prompt))
	for i := range prompt {
		reqs[i] = newSimReq(int64(i), prompt[i], out[i])
		sim.add(reqs[i])
	}
	run := simRun{emitted: map[int64]int{}, firstPreempted: -1}
	for !sim.idle() {
		if run.steps++; run.steps > 100_000 {
			t.Fatalf("not idle after %d steps: %+v", run.steps-1, sim.state())
		}
		before := map[*simReq]int{}
		for _, r := range reqs {
			before[r] = r.preempted
		}
		o := sim.step()
		run.tokens += o.tokens
		run.preempted += o.preempted
		if o.preempted > 0 && run.firstPreempted < 0 {
			for _, r := range reqs {
				if r.preempted > before[r] {
					run.firstPreempted = r.id
					break
				}
			}
		}
		for _, r := range o.emitted {
			run.emitted[r.id]++
		}
		for _, r := range o.failed {
			run.failed = append(run.failed, r.id)
			if r.failMsg == "" {
				t.Errorf("request %d failed without a message", r.id)
			}
		}
		st := sim.state()
		run.maxRunning = max(run.maxRunning, st.running)
		run.maxUsed = max(run.maxUsed, st.usedTokens)
		run.maxUsage = max(run.maxUsage, st.usage)
	}
	if st := sim.state(); st.usedTokens != 0 {
		t.Errorf("idle with %d KV tokens still held", st.usedTokens)
	}
	return run
}

func repeat(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestVLLMSimPreemptsOnlyPastCapacity: a cache of 1024 tokens (64 blocks) and
// requests of 100 + 100 tokens. Up to 4 at once (800 tokens, 52 blocks) fit and
// nothing is preempted; 8 at once (1600 tokens) all get their prompt blocks at
// admission (8 × 7 = 56 blocks), then run out of blocks while decoding: the newest
// is preempted first, every request still gets all its tokens, and the recompute
// costs tokens beyond the work itself.
func TestVLLMSimPreemptsOnlyPastCapacity(t *testing.T) {
	for _, tc := range []struct {
		n       int
		preempt bool
	}{
		{1, false}, {4, false},
		// 5 × 200 = 1000 tokens < 1024, but whole blocks: 5 × 13 = 65 > 64.
		{5, true},
		{8, true}, {16, true},
	} {
		sim := newVLLMSim(1024, 256, 8192, 0.01, false)
		run := drive(t, sim, repeat(tc.n, 100), repeat(tc.n, 100))
		if got := run.preempted > 0; got != tc.preempt {
			t.Errorf("n=%d: %d preemptions, want preemptions %v", tc.n, run.preempted, tc.preempt)
		}
		for i := range tc.n {
			if run.emitted[int64(i)] != 100 {
				t.Errorf("n=%d: request %d got %d tokens, want 100", tc.n, i, run.emitted[int64(i)])
			}
		}
		work := tc.n * (100 + 100 - 1) // the last token sampled needs no KV
		if tc.preempt && run.tokens <= work {
			t.Errorf("n=%d: %d tokens computed with preemptions, want more than the %d of the work", tc.n, run.tokens, work)
		}
		if !tc.preempt && run.tokens != work {
			t.Errorf("n=%d: %d tokens computed, want %d", tc.n, run.tokens, work)
		}
		if run.maxUsage > 1 || run.maxUsed > 1024 {
			t.Errorf("n=%d: usage %v, %d tokens: above the cache", tc.n, run.maxUsage, run.maxUsed)
		}
		if tc.n == 8 {
			if run.maxRunning != 8 {
				t.Errorf("n=8: at most %d running, want all 8 admitted on their prompt blocks", run.maxRunning)
			}
			if run.firstPreempted != 7 {
				t.Errorf("n=8: request %d preempted first, want the newest (7)", run.firstPreempted)
			}
		}
		t.Logf("n=%d: %d steps, %d tokens computed, %d preemptions", tc.n, run.steps, run.tokens, run.preempted)
	}
}

// TestVLLMSimMaxNumSeqs: with a large cache, max_num_seqs bounds the running batch
// and nothing is preempted.
func TestVLLMSimMaxNumSeqs(t *testing.T) {
	sim := newVLLMSim(1<<20, 3, 8192, 0.01, false)
	run := drive(t, sim, repeat(10, 100), repeat(10, 50))
	if run.maxRunning != 3 || run.preempted != 0 {
		t.Errorf("max running %d, %d preemptions; want 3 and none", run.maxRunning, run.preempted)
	}
}

// TestVLLMSimBlocks: one request's blocks: its prompt's at admission, then one more
// at each block boundary while it decodes; chunked prefill samples no token until
// the prompt is computed.
func TestVLLMSimBlocks(t *testing.T) {
	sim := newVLLMSim(1024, 256, 64, 0, false)
	sim.add(newSimReq(0, 100, 40))
	var used []int
	var emitted []int
	for !sim.idle() {
		o := sim.step()
		used = append(used, sim.used)
		emitted = append(emitted, len(o.emitted))
	}
	// Step 1 computes 64 prompt tokens (4 blocks), step 2 the other 36 (7 blocks)
	// and samples token 1; step k ≥ 3 computes token 100+k-2 of the sequence.
	if used[0] != 4 || emitted[0] != 0 {
		t.Errorf("step 1: %d blocks, %d tokens; want 4 blocks (a 64-token chunk) and no token", used[0], emitted[0])
	}
	if used[1] != 7 || emitted[1] != 1 {
		t.Errorf("step 2: %d blocks, %d tokens; want 7 blocks and the first token", used[1], emitted[1])
	}
	for k := 2; k < len(used)-1; k++ {
		seq := 100 + k - 1 // tokens computed after step k+1
		if want := blocksFor(seq); used[k] != want {
			t.Errorf("step %d: %d blocks for %d tokens, want %d", k+1, used[k], seq, want)
		}
	}
	if len(used) != 41 {
		t.Errorf("%d steps, want 41 (2 prefill + 39 decode)", len(used))
	}
}

// TestVLLMSimWatermark: a waiting request is not admitted beside a scheduled one
// when its blocks would eat into the watermark.
func TestVLLMSimWatermark(t *testing.T) {
	// 100 blocks, watermark 10: the first request (48 blocks) is admitted; the
	// second (48 blocks) would leave 4 free, under the watermark.
	sim := newVLLMSim(1600, 256, 8192, 0.1, false)
	sim.add(newSimReq(0, 768, 10))
	sim.add(newSimReq(1, 768, 10))
	sim.step()
	if st := sim.state(); st.running != 1 || st.waiting != 1 {
		t.Errorf("running %d, waiting %d; want 1 and 1", st.running, st.waiting)
	}
	free := newVLLMSim(1600, 256, 8192, 0, false)
	free.add(newSimReq(0, 768, 10))
	free.add(newSimReq(1, 768, 10))
	free.step()
	if st := free.state(); st.running != 2 {
		t.Errorf("no watermark: running %d, want 2", st.running)
	}
}

// TestSGLangSimRetractsOnlyPastCapacity: a pool of 1000 tokens and requests of
// 20 + 180. Up to 5 at once fit; 10 at once overcommit the pool (admission expects
// only new_token_ratio, 0.7, of the outputs: 6 are admitted), and decoding retracts
// requests, which are recomputed and still complete.
func TestSGLangSimRetractsOnlyPastCapacity(t *testing.T) {
	for _, tc := range []struct {
		n       int
		retract bool
	}{{1, false}, {5, false}, {10, true}, {30, true}} {
		sim := newSGLangSim(1000, 4096, 8192, false)
		run := drive(t, sim, repeat(tc.n, 20), repeat(tc.n, 180))
		if got := run.preempted > 0; got != tc.retract {
			t.Errorf("n=%d: %d retractions, want retractions %v", tc.n, run.preempted, tc.retract)
		}
		for i := range tc.n {
			if run.emitted[int64(i)] != 180 {
				t.Errorf("n=%d: request %d got %d tokens, want 180", tc.n, i, run.emitted[int64(i)])
			}
		}
		if run.maxUsed > 1000 {
			t.Errorf("n=%d: %d tokens used, above the pool", tc.n, run.maxUsed)
		}
		if tc.retract && sim.state().preemptionsTotal != int64(run.preempted) {
			t.Errorf("n=%d: total %d, want %d", tc.n, sim.state().preemptionsTotal, run.preempted)
		}
		t.Logf("n=%d: %d steps, %d tokens computed, %d retractions, at most %d running", tc.n, run.steps, run.tokens, run.preempted, run.maxRunning)
	}
}

// TestSGLangSimGauge: sglang:num_retracted_reqs shows the retractions of the last
// 40 steps, published every 40 steps.
func TestSGLangSimGauge(t *testing.T) {
	sim := newSGLangSim(1000, 4096, 8192, false)
	for i := range 10 {
		sim.add(newSimReq(int64(i), 20, 180))
	}
	seen := false
	var total int64
	for steps := 0; !sim.idle() && steps < 100_000; steps++ {
		sim.step()
		st := sim.state()
		if st.retractedRecent > 0 {
			seen = true
		}
		total = st.preemptionsTotal
	}
	if total == 0 || !seen {
		t.Errorf("retracted %d in all, gauge seen non-zero %v; want both", total, seen)
	}
}

// TestLlamaSimUnifiedFailsBatch: a unified cache of 1000 cells and 4 slots;
// requests of 100 + 200 tokens. Three at once fit (900 cells); four need 1200, and
// when the batch no longer fits every processing slot fails with llama.cpp's text.
func TestLlamaSimUnifiedFailsBatch(t *testing.T) {
	for _, tc := range []struct {
		n    int
		fail bool
	}{{3, false}, {4, true}, {8, true}} {
		sim := newLlamaSim(1000, 4, 2048, true)
		run := drive(t, sim, repeat(tc.n, 100), repeat(tc.n, 200))
		if got := len(run.failed) > 0; got != tc.fail {
			t.Errorf("n=%d: failed %v, want failures %v", tc.n, run.failed, tc.fail)
		}
		if tc.fail && len(run.failed) < 4 {
			t.Errorf("n=%d: %d failed, want every processing slot (4) at once", tc.n, len(run.failed))
		}
		if run.maxRunning > 4 || run.maxUsed > 1000 {
			t.Errorf("n=%d: running %d, %d cells; above 4 slots or the cache", tc.n, run.maxRunning, run.maxUsed)
		}
	}
}

// TestLlamaSimSlots: per-slot caches never fail; the slots bind.
func TestLlamaSimSlots(t *testing.T) {
	sim := newLlamaSim(1000, 4, 2048, false)
	run := drive(t, sim, repeat(12, 100), repeat(12, 150))
	if len(run.failed) != 0 || run.maxRunning != 4 {
		t.Errorf("failed %v, at most %d running; want none and 4", run.failed, run.maxRunning)
	}
}
