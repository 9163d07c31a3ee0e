package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestEngineKVTiers sweeps the test engine's vLLM scheduler with a CPU offload
// tier (enginetest Config.HostKVTokens) at c=4, which fits its 2,048-token cache,
// and c=16, which overflows it: the analysis shows per level which tier served the
// prompt KV (from the offloading connector's counters), none of it from the host
// tier at c=4 and a share at c=16, where the verdict names the GPU tier as binding,
// extended by the host tier; without the offload tier no tier is named.
func TestEngineKVTiers(t *testing.T) {
	if testing.Short() {
		t.Skip("records two levels against a step scheduler")
	}
	for _, host := range []int{1 << 20, 0} {
		eng := enginetest.New(enginetest.Config{Model: "m", Scheduler: enginetest.SchedulerVLLM, KVTokens: kvTestTokens, HostKVTokens: host,
			StepTime: time.Millisecond, TokenTime: 5 * time.Microsecond, WaitingTime: 500 * time.Nanosecond})
		r := pressureSweep(t, eng, "4,16", 96)
		eng.Close()
		if host == 0 {
			if r.KVTier != nil {
				t.Errorf("without an offload tier: tier %+v named", *r.KVTier)
			}
			for _, l := range r.Levels {
				if l.Server != nil && l.Server.Tiers != nil {
					t.Errorf("without an offload tier: level %d has tiers %+v", l.Level, *l.Server.Tiers)
				}
			}
			continue
		}
		if len(r.Levels) != 2 {
			t.Fatalf("%d levels", len(r.Levels))
		}
		for _, l := range r.Levels {
			if l.Server == nil || l.Server.Tiers == nil || l.Server.Tiers.HostShare == nil || l.Server.Tiers.Recomputed == nil {
				t.Fatalf("level %d (c=%d): no tier shares: %+v", l.Level, l.Concurrency, l.Server)
			}
			k := l.Server.Tiers
			t.Logf("c=%d: KV max %s, preemptions %v, host share %.3f, recomputed %.3f, loads %.0f B/s, host usage max %s",
				l.Concurrency, pctOf(l.Server.KVUsageMax), derefOr(l.Server.Preemptions), *k.HostShare, *k.Recomputed, derefOr(k.LoadBytesPerS), pctOf(k.HostUsageMax))
			if k.Source != "vllm:prompt_tokens_by_source" {
				t.Errorf("c=%d: source %q", l.Concurrency, k.Source)
			}
			if over := l.Concurrency == 16; (*k.HostShare >= 0.02) != over {
				t.Errorf("c=%d: host share %.3f; want at least 2%% exactly where the cache overflows", l.Concurrency, *k.HostShare)
			}
		}
		b := r.KVTier
		if b == nil || b.Tier != "gpu" || b.Level != r.Levels[1].Level || !strings.Contains(b.Evidence, "the host tier serves the overflow") {
			t.Errorf("tier %+v; want the GPU's at c=16, the host tier serving its overflow", b)
		}
		if ev := strings.Join(r.Ceiling.Evidence, "\n"); !strings.Contains(ev, "prompt KV served per level, of prompt tokens: c=4 ") || !strings.Contains(ev, "the GPU tier binds") {
			t.Errorf("the verdict's evidence lacks the tiers:\n%s", ev)
		}
	}
}
