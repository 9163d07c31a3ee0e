package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/prom"
)

// scrapesOf parses Prometheus pages (one a second) into timed snapshots, as the
// sidecar's scrapes are mapped.
func scrapesOf(t *testing.T, pages ...string) []timedSnapshot {
	t.Helper()
	var out []timedSnapshot
	for i, p := range pages {
		samples, err := prom.Parse(strings.NewReader(p))
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		var cs []counterSample
		for _, s := range samples {
			cs = append(cs, counterSample{s.Name, s.Labels, s.Value})
		}
		out = append(out, timedSnapshot{int64(i) * 1e9, mapSnapshot(cs)})
	}
	return out
}

// TestLevelTiers maps each server's tier counters (names as their sources define
// them) over two scrapes a second apart to the shares of prompt KV each tier
// served, the host tier's fill and its traffic.
func TestLevelTiers(t *testing.T) {
	type want struct {
		gpu, host, storage, recompute float64 // -1: null
		usageMax, loadBps, storeBps   float64 // -1: null
		capacity, bytesMax            float64 // -1: null
	}
	cases := []struct {
		name   string
		pages  []string
		source string // "" with want nil: no tiers
		want   *want
	}{
		{"vLLM prompt tokens by source, offloading connector", []string{`
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_cache_hit"} 100
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="external_kv_transfer"} 0
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_compute"} 900
vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="cpu_to_gpu"} 0
vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="gpu_to_cpu"} 1e9
vllm:kv_offload_cpu_cache_usage_perc{engine="0",model_name="m"} 0.5
`, `
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_cache_hit"} 500
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="external_kv_transfer"} 300
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_compute"} 1200
vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="cpu_to_gpu"} 2e9
vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="gpu_to_cpu"} 1.5e9
vllm:kv_offload_cpu_cache_usage_perc{engine="0",model_name="m"} 0.7
`}, "vllm:prompt_tokens_by_source", &want{0.4, 0.3, -1, 0.3, 0.7, 2e9, 5e8, -1, -1}},
		{"vLLM external prefix cache hits, transfer type in capitals", []string{`
vllm:prompt_tokens_total{engine="0",model_name="m"} 0
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 0
vllm:external_prefix_cache_hits_total{engine="0",model_name="m"} 0
vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="CPU_to_GPU"} 0
`, `
vllm:prompt_tokens_total{engine="0",model_name="m"} 1000
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 200
vllm:external_prefix_cache_hits_total{engine="0",model_name="m"} 500
vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="CPU_to_GPU"} 3e8
`}, "vllm:prefix_cache_hits, vllm:external_prefix_cache_hits over vllm:prompt_tokens", &want{0.2, 0.5, -1, 0.3, -1, 3e8, -1, -1, -1}},
		{"LMCache beside vLLM", []string{`
vllm:prompt_tokens_total{model_name="m"} 0
vllm:prefix_cache_hits_total{model_name="m"} 0
lmcache:num_hit_tokens_total{model_name="m",worker_id="0"} 0
lmcache:local_cache_usage{model_name="m",worker_id="0"} 1e9
`, `
vllm:prompt_tokens_total{model_name="m"} 1000
vllm:prefix_cache_hits_total{model_name="m"} 100
lmcache:num_hit_tokens_total{model_name="m",worker_id="0"} 600
lmcache:local_cache_usage{model_name="m",worker_id="0"} 2e9
`}, "vllm:prefix_cache_hits, lmcache:num_hit_tokens over vllm:prompt_tokens", &want{0.1, 0.6, -1, 0.3, -1, -1, -1, -1, 2e9}},
		{"SGLang HiCache", []string{`
sglang:prompt_tokens_total{model_name="m"} 0
sglang:cached_tokens_total{cache_source="device",model_name="m"} 0
sglang:cached_tokens_total{cache_source="host",model_name="m"} 0
sglang:cached_tokens_total{cache_source="storage",model_name="m"} 0
sglang:hicache_host_used_tokens{tp_rank="0"} 900
sglang:hicache_host_total_tokens{tp_rank="0"} 1000
`, `
sglang:prompt_tokens_total{model_name="m"} 1000
sglang:cached_tokens_total{cache_source="device",model_name="m"} 300
sglang:cached_tokens_total{cache_source="host",model_name="m"} 200
sglang:cached_tokens_total{cache_source="storage",model_name="m"} 100
sglang:hicache_host_used_tokens{tp_rank="0"} 980
sglang:hicache_host_total_tokens{tp_rank="0"} 1000
`}, "sglang:cached_tokens by cache_source over sglang:prompt_tokens", &want{0.3, 0.2, 0.1, 0.4, 0.98, -1, -1, 1000, -1}},
		{"vLLM without a host tier", []string{`
vllm:prompt_tokens_total{model_name="m"} 0
vllm:prefix_cache_hits_total{model_name="m"} 0
vllm:prefix_cache_queries_total{model_name="m"} 0
`, `
vllm:prompt_tokens_total{model_name="m"} 1000
vllm:prefix_cache_hits_total{model_name="m"} 300
vllm:prefix_cache_queries_total{model_name="m"} 1000
`}, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := levelTiers(scrapesOf(t, c.pages...))
			if c.want == nil {
				if k != nil {
					t.Fatalf("tiers %+v; want none", *k)
				}
				return
			}
			if k == nil {
				t.Fatal("no tiers")
			}
			if k.Source != c.source {
				t.Errorf("source %q, want %q", k.Source, c.source)
			}
			for _, f := range []struct {
				name string
				got  *float64
				want float64
			}{{"gpu share", k.GPUShare, c.want.gpu}, {"host share", k.HostShare, c.want.host}, {"storage share", k.StorageShare, c.want.storage},
				{"recompute share", k.Recomputed, c.want.recompute}, {"host usage max", k.HostUsageMax, c.want.usageMax},
				{"load bytes/s", k.LoadBytesPerS, c.want.loadBps}, {"store bytes/s", k.StoreBytesPerS, c.want.storeBps},
				{"host capacity", k.HostCapacityTokens, c.want.capacity}, {"host bytes max", k.HostUsedBytesMax, c.want.bytesMax}} {
				switch {
				case f.want < 0 && f.got != nil:
					t.Errorf("%s %v, want null", f.name, *f.got)
				case f.want >= 0 && (f.got == nil || math.Abs(*f.got-f.want) > 1e-9*math.Max(1, f.want)):
					t.Errorf("%s %v, want %v", f.name, nullable(f.got), f.want)
				}
			}
		})
	}
}

func nullable(v *float64) any {
	if v == nil {
		return "null"
	}
	return *v
}

// TestTierVerdict names the KV tier that binds from the levels' counters: the
// GPU's when its cache is full and the host tier serves the overflow, the host's
// when the host tier fills, none without a host tier or with neither full; the
// per-level shares join the verdict's evidence.
func TestTierVerdict(t *testing.T) {
	level := func(c int, gpuMax, hostShare, hostMax float64) Level {
		k := &KVTiers{Source: "test", PromptTokens: 1000, GPUShare: ptr(0.2), HostShare: ptr(hostShare), Recomputed: ptr(0.8 - hostShare)}
		if hostMax >= 0 {
			k.HostUsageMax = ptr(hostMax)
		}
		return Level{Level: c, Concurrency: c, Valid: true,
			Server: &ServerCounters{KVUsageMax: ptr(gpuMax), KVUsageMean: ptr(gpuMax * 0.9), Tiers: k}}
	}
	cases := []struct {
		name     string
		levels   []Level
		tier     string // "" none
		level    int
		evidence string
		perLevel bool
	}{
		{"the host tier serves the GPU's overflow", []Level{level(8, 0.5, 0, 0.1), level(16, 0.97, 0.3, 0.4), level(32, 0.99, 0.4, 0.6)},
			"gpu", 16, "the GPU KV cache is full at c=16 (usage up to 97%) and the host tier serves the overflow (GPU prefix hits 20%, host tier 30%, recomputed 50%): the GPU tier binds, extended by the host tier", true},
		{"the host tier fills", []Level{level(8, 0.5, 0.1, 0.5), level(16, 0.9, 0.3, 0.96)},
			"host", 16, "the host KV tier is full at c=16 (up to 96% used): the host tier binds", true},
		{"neither tier full", []Level{level(8, 0.5, 0.1, 0.2), level(16, 0.8, 0.2, 0.5)}, "", 0, "", true},
		{"no host tier", []Level{level(8, 0.99, 0, -1)}, "", 0, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Run{Levels: c.levels}
			tierVerdict(r)
			ev := strings.Join(r.Ceiling.Evidence, "\n")
			if c.tier == "" {
				if r.KVTier != nil {
					t.Errorf("tier %+v; want none", *r.KVTier)
				}
			} else if r.KVTier == nil || r.KVTier.Tier != c.tier || r.KVTier.Level != c.level || !strings.Contains(r.KVTier.Evidence, c.evidence) || !strings.Contains(ev, c.evidence) {
				t.Errorf("tier %+v, evidence %q; want %s at level %d with %q", r.KVTier, ev, c.tier, c.level, c.evidence)
			}
			if got := strings.Contains(ev, "prompt KV served per level, of prompt tokens: c=8 GPU prefix hits 20%"); got != c.perLevel {
				t.Errorf("per-level shares in the evidence: %v, want %v (evidence %q)", got, c.perLevel, ev)
			}
		})
	}
}
