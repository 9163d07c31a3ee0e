package probe

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Issue 18 item 1: a server that echoes the request's Authorization header in
// every string it supplies (the version of /version, /props, /get_server_info and
// /info, the model ids) never gets the key into the probe's result. Each endpoint
// is the one that sets the version for its kind of server.
func TestProbeRedactsEveryServerString(t *testing.T) {
	const key = "sk-probe-echo-9876"
	echo := func(r *http.Request) string { return "v1 " + r.Header.Get("Authorization") }
	tests := []struct {
		name     string
		endpoint string // the one that sets Version
		body     func(r *http.Request) any
	}{
		{"vllm /version", "/version", func(r *http.Request) any { return map[string]any{"version": echo(r)} }},
		{"llamacpp /props", "/props", func(r *http.Request) any {
			return map[string]any{"total_slots": 2, "build_info": echo(r), "default_generation_settings": map[string]any{"n_ctx": 100}}
		}},
		{"sglang /get_server_info", "/get_server_info", func(r *http.Request) any {
			return map[string]any{"max_total_num_tokens": 1000, "version": echo(r)}
		}},
		{"tgi /info", "/info", func(r *http.Request) any {
			return map[string]any{"model_id": "m", "version": echo(r)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var v any
				switch r.URL.Path {
				case "/v1/models":
					v = map[string]any{"data": []map[string]any{{"id": "m " + echo(r)}}}
				case tt.endpoint:
					v = tt.body(r)
				default:
					http.NotFound(w, r)
					return
				}
				json.NewEncoder(w).Encode(v)
			}))
			defer srv.Close()
			p, err := Server(context.Background(), newClient(t, srv.URL, key))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(p.Server.Version, "v1 ") {
				t.Fatalf("version %q: the endpoint %s was not the one read, the test proves nothing", p.Server.Version, tt.endpoint)
			}
			b, _ := json.Marshal(p.Server)
			for _, s := range []string{string(b), p.Server.Version} {
				if strings.Contains(s, key) {
					t.Errorf("the probe's server info holds the key: %s", s)
				}
			}
		})
	}
}
