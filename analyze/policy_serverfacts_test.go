package analyze

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// Issue 31 item 11: a server figure outside what any server runs drives nothing:
// the run info's num_gpu_blocks × block_size that overflowed int64 (and the KV
// capacity of 4 tokens the recorder stored from it), a negative slot count, and a
// scraped vllm:cache_config_info whose product is beyond any KV pool are left out,
// each with a warning naming the field. Before, "KV cache: 4 tokens (declared)".
func TestServerDeclaredFiguresOutOfRangeNotUsed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		server   func(*trace.ServerInfo)
		sidecar  string // cache_config_info labels, "" for no sidecar
		wantWarn []string
	}{
		{"run info blocks × size wrapped to 4", func(s *trace.ServerInfo) {
			s.Kind, s.NumGPUBlocks, s.BlockSize, s.KVCapacityTokens = "vllm", ptr64(4611686018427387905), ptr64(4), ptr64(4)
		}, "", []string{"server.num_gpu_blocks = 4611686018427387905 × server.block_size = 4", "server.kv_capacity_tokens = 4 is that product wrapped"}},
		{"run info KV capacity negative", func(s *trace.ServerInfo) { s.KVCapacityTokens = ptr64(-4096) }, "", []string{"server.kv_capacity_tokens = -4096 is outside"}},
		{"run info slots", func(s *trace.ServerInfo) { s.KVCapacityTokens, s.Slots = nil, ptr64(-3) }, "", []string{"server.slots = -3 is outside"}},
		{"scraped cache_config_info", func(s *trace.ServerInfo) { s.Kind, s.KVCapacityTokens = "vllm", nil },
			`block_size="4",num_gpu_blocks="4611686018427387905"`, []string{"vllm:cache_config_info num_gpu_blocks = 4.611686018427388e+18 × block_size = 4 is outside"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			info := knownInfo()
			tc.server(&info.Server)
			path := writeTrace(t, dir, "run.parquet", info, knownRows())
			if tc.sidecar != "" {
				var samples []trace.MetricSample
				for ts := t0 - 1e9; ts < t0+3e9; ts += 2e8 {
					samples = append(samples, trace.MetricSample{TsNs: ts, Name: "vllm:cache_config_info", Labels: tc.sidecar, Value: 1},
						trace.MetricSample{TsNs: ts, Name: "vllm:num_requests_running", Labels: `model_name="tiny"`, Value: 2},
						trace.MetricSample{TsNs: ts, Name: "vllm:kv_cache_usage_perc", Labels: `model_name="tiny"`, Value: 0.9})
				}
				if err := trace.WriteMetricsFile(filepath.Join(dir, "run.metrics.parquet"), info, samples); err != nil {
					t.Fatal(err)
				}
			}
			a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
			if err != nil {
				t.Fatal(err)
			}
			r := a.Runs[0]
			if c := r.Capacity; c != nil && c.DeclaredKVCapacityTokens != nil {
				t.Errorf("declared KV capacity %d tokens used", *c.DeclaredKVCapacityTokens)
			}
			if k := r.KVCheck; k != nil && k.DeclaredTokens != nil {
				t.Errorf("the KV check used a declared %d tokens", *k.DeclaredTokens)
			}
			w := strings.Join(r.Warnings, "\n")
			for _, want := range tc.wantWarn {
				if !strings.Contains(w, want) {
					t.Errorf("no warning says %q: %q", want, r.Warnings)
				}
			}
		})
	}
}

func ptr64(v int64) *int64 { return &v }
