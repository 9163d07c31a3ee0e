package probe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/record/internal/client"
)

func newClient(t *testing.T, url, key string) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{BaseURL: url, Model: "m", APIKey: key, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestServerKinds(t *testing.T) {
	tests := []struct {
		kind           string
		cfg            enginetest.Config
		wantKV         int64 // 0 = unknown
		wantSlots      int64 // 0 = unknown
		wantMetricsURL bool
	}{
		{"vllm", enginetest.Config{Kind: "vllm", KVTokens: 4096}, 4096, 0, true},
		// kv_cache_size_tokens beats num_gpu_blocks × block_size (4112 here).
		{"vllm", enginetest.Config{Kind: "vllm", KVTokens: 4100}, 4100, 0, true},
		// Several llama.cpp slots: no single figure (TestLlamaKVRange).
		{"llamacpp", enginetest.Config{Kind: "llamacpp", Slots: 4, MaxModelLen: 2048}, 0, 4, true},
		{"sglang", enginetest.Config{Kind: "sglang", KVTokens: 100000, Slots: 32}, 100000, 32, true},
		{"unknown", enginetest.Config{}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			tt.cfg.Model = "m"
			eng := enginetest.New(tt.cfg)
			defer eng.Close()
			p, err := Server(context.Background(), newClient(t, eng.URL(), ""))
			if err != nil {
				t.Fatal(err)
			}
			if string(p.Server.Kind) != tt.kind {
				t.Errorf("kind %q, want %q", p.Server.Kind, tt.kind)
			}
			if len(p.Models) != 1 || p.Models[0] != "m" {
				t.Errorf("models %v, want [m]", p.Models)
			}
			if got := deref(p.Server.KVCapacityTokens); got != tt.wantKV {
				t.Errorf("KV capacity %d tokens, want %d", got, tt.wantKV)
			}
			if got := deref(p.Server.Slots); got != tt.wantSlots {
				t.Errorf("slots %d, want %d", got, tt.wantSlots)
			}
			if (p.Server.MetricsURL != "") != tt.wantMetricsURL {
				t.Errorf("metrics URL %q, want one: %v", p.Server.MetricsURL, tt.wantMetricsURL)
			}
		})
	}
}

// TestLlamaKVRange: a llama.cpp server's /props and /slots read the same whether
// its slots share one cache (--kv-unified) or own one each, so the probe states the
// range the server declared (n_ctx .. slots × n_ctx), never one figure, and one
// slot is one cache of n_ctx. The unified server below is the one of issue 27: 8
// slots sharing 2,048 tokens, which the probe had said "declares" 16,384.
func TestLlamaKVRange(t *testing.T) {
	tests := []struct {
		name       string
		cfg        enginetest.Config
		kv, lo, hi int64 // 0 = none
		layout     string
	}{
		{"unified 8 slots", enginetest.Config{Scheduler: enginetest.SchedulerLlamaUnified, Slots: 8, KVTokens: 2048}, 0, 2048, 8 * 2048, "unknown"},
		{"per slot 8 slots", enginetest.Config{Scheduler: enginetest.SchedulerLlamaSlots, Slots: 8, KVTokens: 16384}, 0, 2048, 8 * 2048, "unknown"},
		{"per slot 4 slots", enginetest.Config{Scheduler: enginetest.SchedulerLlamaSlots, Slots: 4, KVTokens: 4096}, 0, 1024, 4 * 1024, "unknown"},
		{"one slot", enginetest.Config{Scheduler: enginetest.SchedulerLlamaUnified, Slots: 1, KVTokens: 2048}, 2048, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Model = "m"
			eng := enginetest.New(tt.cfg)
			defer eng.Close()
			p, err := Server(context.Background(), newClient(t, eng.URL(), ""))
			if err != nil {
				t.Fatal(err)
			}
			s := p.Server
			if s.Kind != "llamacpp" {
				t.Fatalf("kind %q, want llamacpp", s.Kind)
			}
			if deref(s.KVCapacityTokens) != tt.kv || deref(s.KVCapacityMinTokens) != tt.lo || deref(s.KVCapacityMaxTokens) != tt.hi || s.KVLayout != tt.layout {
				t.Errorf("KV %d tokens, range %d..%d, layout %q; want %d, %d..%d, %q",
					deref(s.KVCapacityTokens), deref(s.KVCapacityMinTokens), deref(s.KVCapacityMaxTokens), s.KVLayout, tt.kv, tt.lo, tt.hi, tt.layout)
			}
		})
	}
}

func TestServerErrors(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", APIKey: "sk-right"})
	defer eng.Close()
	if _, err := Server(context.Background(), newClient(t, eng.URL(), "sk-wrong")); !errors.Is(err, client.ErrUnauthorized) {
		t.Errorf("wrong key: %v, want ErrUnauthorized", err)
	}
	if _, err := Server(context.Background(), newClient(t, eng.URL(), "sk-right")); err != nil {
		t.Errorf("right key: %v", err)
	}
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := Server(context.Background(), newClient(t, "http://"+addr, "")); !errors.Is(err, client.ErrUnreachable) {
		t.Errorf("closed port: %v, want ErrUnreachable", err)
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// TestTGIInfo: TGI's /info gives one request's limit (max_total_tokens) and the KV
// cache of the whole batch (max_batch_total_tokens), the figure the analysis
// declares; the body is the shape TGI 3.x answers with.
func TestTGIInfo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"meta-llama"}]}`))
		case "/info":
			_, _ = w.Write([]byte(`{"model_id":"meta-llama/Llama-3.1-8B-Instruct","model_dtype":"torch.float16","max_input_tokens":4095,"max_total_tokens":4096,"max_batch_total_tokens":149904,"max_concurrent_requests":128,"version":"3.1.2"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	p, err := Server(context.Background(), newClient(t, srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	if p.Server.Kind != "tgi" || deref(p.Server.KVCapacityTokens) != 149904 || deref(p.Server.MaxModelLen) != 4096 || p.Server.Version != "3.1.2" {
		t.Errorf("TGI probe %+v, want kind tgi, KV 149904, max_model_len 4096, version 3.1.2", p.Server)
	}
}

// Issue 31 item 11: every figure a server declares is range-checked before it is
// kept: vLLM's num_gpu_blocks × block_size that overflows int64 (to 4 tokens, as a
// forged page made it), a product beyond any KV pool, a negative or zero count,
// llama.cpp's slots and SGLang's pool; each refused figure is named in a note and
// left unknown, never used.
func TestServerDeclaredFiguresRangeChecked(t *testing.T) {
	models := `{"data":[{"id":"m","owned_by":"OWNER","max_model_len":MAXLEN}]}`
	cacheInfo := func(blocks, size string) string {
		return `vllm:cache_config_info{block_size="` + size + `",cache_dtype="auto",num_cpu_blocks="0",num_gpu_blocks="` + blocks + `"} 1.0` + "\n"
	}
	for _, tc := range []struct {
		name      string
		pages     map[string]string
		wantKV    int64 // 0 = unknown
		wantSlots int64
		wantNote  string
	}{
		{"blocks × size overflows to 4", map[string]string{"/metrics": cacheInfo("4611686018427387905", "4")}, 0, 0, "num_gpu_blocks = 4611686018427387905, outside 1..4294967296"},
		{"blocks × size beyond any pool", map[string]string{"/metrics": cacheInfo("4294967296", "65536")}, 0, 0, "whose product is outside 1..68719476736 tokens"},
		{"negative blocks", map[string]string{"/metrics": cacheInfo("-4", "16")}, 0, 0, "num_gpu_blocks = -4"},
		{"zero block size", map[string]string{"/metrics": cacheInfo("1000", "0")}, 0, 0, "block_size = 0"},
		{"in range", map[string]string{"/metrics": cacheInfo("1000", "16")}, 16000, 0, ""},
		{"max_model_len beyond", map[string]string{"MAXLEN": "9223372036854775807", "/metrics": cacheInfo("1000", "16")}, 16000, 0, "/v1/models max_model_len = 9223372036854775807"},
		{"llama.cpp slots", map[string]string{"/props": `{"total_slots":-3,"default_generation_settings":{"n_ctx":4096}}`}, 0, 0, "/props total_slots = -3"},
		{"llama.cpp n_ctx × slots", map[string]string{"/props": `{"total_slots":1048576,"default_generation_settings":{"n_ctx":68719476736}}`}, 0, 1048576, "whose product is outside"},
		{"sglang pool", map[string]string{"OWNER": "sglang", "/get_server_info": `{"max_total_num_tokens":-1,"max_running_requests":1000000000000}`}, 0, 0, "max_total_num_tokens = -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v1/models" {
					ml := tc.pages["MAXLEN"]
					if ml == "" {
						ml = "4096"
					}
					owner := tc.pages["OWNER"]
					if owner == "" {
						owner = "vllm"
					}
					_, _ = w.Write([]byte(strings.NewReplacer("MAXLEN", ml, "OWNER", owner).Replace(models)))
					return
				}
				page, ok := tc.pages[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				_, _ = w.Write([]byte(page))
			}))
			defer srv.Close()
			p, err := Server(context.Background(), newClient(t, srv.URL, ""))
			if err != nil {
				t.Fatal(err)
			}
			if got := deref(p.Server.KVCapacityTokens); got != tc.wantKV {
				t.Errorf("KV capacity %d tokens, want %d (notes %q)", got, tc.wantKV, p.Notes)
			}
			if got := deref(p.Server.Slots); got != tc.wantSlots {
				t.Errorf("slots %d, want %d", got, tc.wantSlots)
			}
			if ml := deref(p.Server.MaxModelLen); ml < 0 || ml > maxDeclaredTokens {
				t.Errorf("max_model_len %d kept", ml)
			}
			notes := strings.Join(p.Notes, "\n")
			if tc.wantNote == "" && notes != "" {
				t.Errorf("notes %q for figures in range", notes)
			}
			if !strings.Contains(notes, tc.wantNote) {
				t.Errorf("notes %q, want one saying %q", notes, tc.wantNote)
			}
		})
	}
}
