package enginetest

import (
	"testing"
	"time"
)

// closedLoop runs a step scheduler in virtual time with c clients, each sending a
// request of prompt + out tokens as soon as its previous one finished, and returns
// the generated tokens per second (of virtual time) over the completions after the
// first c (the ramp), and the preemptions over the same window.
func closedLoop(t *testing.T, cfg Config, c, prompt, out, completions int) (tokS float64, preempted int) {
	t.Helper()
	if err := checkScheduler(&cfg); err != nil {
		t.Fatal(err)
	}
	sim := newKVSim(&cfg)
	var id int64
	for range c {
		sim.add(newSimReq(id, prompt, out))
		id++
	}
	var elapsed time.Duration
	done, tokens := 0, 0
	for done < c+completions {
		o := sim.step()
		if done >= c {
			elapsed += cfg.stepDuration(o.tokens, sim.state().waiting)
			tokens += len(o.emitted)
			preempted += o.preempted
		}
		for _, r := range o.emitted {
			if r.generated >= r.maxOut {
				done++
				sim.add(newSimReq(id, prompt, out))
				id++
			}
		}
		if len(o.failed) > 0 {
			t.Fatalf("c=%d: %d requests failed", c, len(o.failed))
		}
	}
	return float64(tokens) / elapsed.Seconds(), preempted
}

// publishedShape is a vLLM-like engine sized after the published figures (a cache
// of ~68 requests of 512 + 512 tokens; 3,086 tok/s at c=256, ~2,740 at c=1024).
var publishedShape = Config{KVTokens: 68 * 1024, StepTime: 12 * time.Millisecond,
	TokenTime: 50 * time.Microsecond, WaitingTime: 5 * time.Microsecond, Slots: 1024}

// TestThroughputFallsPastCapacity: in virtual time (deterministic, no clock), the
// vLLM and SGLang step schedulers preempt (retract) only once c × request size
// exceeds the cache, and past the cache their token rate falls instead of
// plateauing: at c=1024 it is under 90% of the peak and under the rate at c=256.
func TestThroughputFallsPastCapacity(t *testing.T) {
	for _, sched := range []string{SchedulerVLLM, SchedulerSGLang} {
		cfg := publishedShape
		cfg.Scheduler = sched
		rate := map[int]float64{}
		peak := 0.0
		for _, c := range []int{16, 32, 64, 68, 96, 128, 256, 1024} {
			tok, p := closedLoop(t, cfg, c, 512, 512, 1000)
			rate[c] = tok
			peak = max(peak, tok)
			if over := c > 68; over != (p > 0) {
				t.Errorf("%s c=%d: %d preemptions; want some exactly when c > 68", sched, c, p)
			}
			t.Logf("%s c=%d: %.0f tok/s, %d preemptions in 1000 completions", sched, c, tok, p)
		}
		if rate[1024] >= 0.9*peak || rate[1024] >= rate[256] {
			t.Errorf("%s: %.0f tok/s at c=1024, %.0f at 256, peak %.0f: no fall past the KV capacity", sched, rate[1024], rate[256], peak)
		}
	}
}
