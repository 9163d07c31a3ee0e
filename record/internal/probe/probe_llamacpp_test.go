package probe

import (
	"context"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/realserver"
)

// TestLlamaKVRangeRealServer: a real llama.cpp server with 8 slots sharing one
// 2,048-token cache (--kv-unified, the server of issue 27) and one with 8 slots of
// 2,048 each answer /props and /slots alike, so the probe states the same range,
// 2,048 .. 16,384, for both: one figure would be wrong for one of them.
func TestLlamaKVRangeRealServer(t *testing.T) {
	for _, tt := range []struct {
		name string
		opt  realserver.Options
	}{
		{"unified", realserver.Options{Slots: 8, Context: 2048, Unified: true}},
		{"per slot", realserver.Options{Slots: 8, Context: 8 * 2048}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := realserver.Start(t, tt.opt)
			p, err := Server(context.Background(), newClient(t, srv.URL, ""))
			if err != nil {
				t.Fatal(err)
			}
			s := p.Server
			if s.Kind != "llamacpp" || deref(s.Slots) != 8 || deref(s.NCtx) != 2048 {
				t.Fatalf("kind %q, %d slots of n_ctx %d; want llamacpp, 8 of 2048", s.Kind, deref(s.Slots), deref(s.NCtx))
			}
			if s.KVCapacityTokens != nil || s.KVLayout != "unknown" || deref(s.KVCapacityMinTokens) != 2048 || deref(s.KVCapacityMaxTokens) != 16384 {
				t.Errorf("KV %v, layout %q, range %d..%d; want no single figure, unknown, 2048..16384",
					s.KVCapacityTokens, s.KVLayout, deref(s.KVCapacityMinTokens), deref(s.KVCapacityMaxTokens))
			}
		})
	}
}
