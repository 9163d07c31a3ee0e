package enginetest

import (
	"strings"
	"testing"
)

// TestOffloadSim drives the vLLM scheduler with and without a CPU offload tier
// through the same overflowing load (16 requests of 40 + 160 tokens in a
// 1,024-token cache): without one, every preempted request recomputes its
// context; with a large tier, every resume loads its stored full blocks and
// recomputes less than a block, so the engine computes fewer tokens; with a tier
// too small for any entry, nothing is stored or loaded. Every request gets all its
// tokens and no KV is left held.
func TestOffloadSim(t *testing.T) {
	n := 16
	prompt, out := make([]int, n), make([]int, n)
	for i := range n {
		prompt[i], out[i] = 40, 160
	}
	plain := drive(t, newVLLMSim(1024, 256, 8192, 0.01), prompt, out)
	if plain.preempted == 0 {
		t.Fatal("the load never preempted: the test cannot tell the tiers apart")
	}
	for _, tc := range []struct {
		name      string
		host      int
		wantLoads bool
	}{{"large host tier", 1 << 20, true}, {"host tier smaller than an entry", 8, false}} {
		t.Run(tc.name, func(t *testing.T) {
			sim := newOffloadSim(newVLLMSim(1024, 256, 8192, 0.01), tc.host)
			run := drive(t, sim, prompt, out)
			for i := range n {
				if run.emitted[int64(i)] != out[i] {
					t.Errorf("request %d: %d tokens, want %d", i, run.emitted[int64(i)], out[i])
				}
			}
			resumes := int64(run.preempted)
			t.Logf("%s: %d preemptions, %d tokens computed (%d without a tier), loaded %d, stored %d, local compute %d, external %d",
				tc.name, run.preempted, run.tokens, plain.tokens, sim.loaded, sim.stored, sim.localCompute, sim.external)
			if sim.external != sim.loaded {
				t.Errorf("external tokens %d, loaded %d: the same tokens", sim.external, sim.loaded)
			}
			if !tc.wantLoads {
				if sim.loaded != 0 || sim.stored != 0 || run.tokens != plain.tokens {
					t.Errorf("loaded %d, stored %d, %d tokens computed; want nothing moved and the plain %d computed", sim.loaded, sim.stored, run.tokens, plain.tokens)
				}
				return
			}
			if sim.loaded == 0 || sim.stored < sim.loaded || run.tokens >= plain.tokens {
				t.Errorf("loaded %d, stored %d, %d tokens computed; want loads, stores ≥ loads and fewer than the plain %d", sim.loaded, sim.stored, run.tokens, plain.tokens)
			}
			// Each resume recomputes less than a block beyond what it loaded.
			if saved := int64(plain.tokens - run.tokens); saved < sim.loaded-resumes*blockSize {
				t.Errorf("%d tokens saved, want about the %d loaded", saved, sim.loaded)
			}
		})
	}
}

// TestOffloadMetrics: an engine with HostKVTokens serves the offloading
// connector's series under vLLM's names; without it, none of them; HostKVTokens
// on another scheduler is refused.
func TestOffloadMetrics(t *testing.T) {
	names := []string{`vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="external_kv_transfer"}`,
		`vllm:external_prefix_cache_hits_total{engine="0",model_name="m"}`,
		`vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="cpu_to_gpu"}`,
		`vllm:kv_offload_cpu_cache_usage_perc{engine="0",model_name="m"}`}
	for _, host := range []int{0, 4096} {
		s := New(Config{Model: "m", Scheduler: SchedulerVLLM, KVTokens: 1024, HostKVTokens: host})
		m := get(t, s.URL()+"/metrics")
		s.Close()
		for _, name := range names {
			if got := strings.Contains(m, name+" "); got != (host > 0) {
				t.Errorf("HostKVTokens %d: %s served %v", host, name, got)
			}
		}
	}
	if _, err := Start(Config{Model: "m", Scheduler: SchedulerSGLang, KVTokens: 1024, HostKVTokens: 4096}); err == nil || !strings.Contains(err.Error(), "HostKVTokens") {
		t.Errorf("HostKVTokens on SGLang: error %v, want one naming HostKVTokens", err)
	}
}
