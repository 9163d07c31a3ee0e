package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// Issue 18 item 2: a --config file or a --config-from trace never chooses which
// secret is sent (api-key-env), nor sends the key to the URL it holds unless the
// command line asks (--url or --api-key-env given there). A server that records
// the Authorization values it receives tells what was sent; the control case
// (--url on the command line) shows the test sees a key when one is sent.
func TestConfigNeverChoosesTheSecret(t *testing.T) {
	const openai, hf = "sk-openai-key-1111", "hf_secret_token_2222"
	getenv := func(k string) string {
		return map[string]string{"OPENAI_API_KEY": openai, "HF_TOKEN": hf}[k]
	}
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, r) // nothing to record: the run ends at the probe
	}))
	defer srv.Close()
	dir := t.TempDir()
	traceWithEnv := filepath.Join(dir, "shared.parquet")
	info := trace.RunInfo{Tool: "ceiling", Version: "test", RunID: "r1",
		Config: map[string]string{"url": srv.URL, "api-key-env": "HF_TOKEN", "concurrency": "1", "model": "m"}}
	if err := trace.WriteFile(traceWithEnv, info, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantSent string // the key the server may see ("" = none)
		wantErr  string
	}{
		{"control: --url on the command line", []string{"--url", srv.URL, "--concurrency", "1", "--model", "m"}, exitFailed, openai, ""},
		{"config names api-key-env", []string{"--config", writeConfig(t, "c.yaml", "url: "+srv.URL+"\napi-key-env: HF_TOKEN\nconcurrency: [1]\nmodel: m\n")},
			exitUsage, "", "api-key-env"},
		{"url from a config file", []string{"--config", writeConfig(t, "c.yaml", "url: "+srv.URL+"\nconcurrency: [1]\nmodel: m\n")},
			exitFailed, "", "not sending"},
		{"url and api-key-env from a trace", []string{"--config-from", traceWithEnv},
			exitFailed, "", "not sending"},
		{"url from a config, key asked for on the command line", []string{"--api-key-env", "OPENAI_API_KEY",
			"--config", writeConfig(t, "c.yaml", "url: "+srv.URL+"\nconcurrency: [1]\nmodel: m\n")}, exitFailed, openai, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			args := append([]string{"-o", filepath.Join(t.TempDir(), "out.parquet")}, tt.args...)
			code, _, stderr := runRecordArgs(getenv, args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s", code, tt.wantCode, stderr)
			}
			if tt.wantErr != "" && !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantErr, stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, a := range seen {
				for _, k := range []string{openai, hf} {
					if strings.Contains(a, k) && k != tt.wantSent {
						t.Errorf("the server received %q", a)
					}
				}
			}
			if tt.wantSent != "" && !strings.Contains(strings.Join(seen, " "), tt.wantSent) {
				t.Errorf("the key asked for was not sent (seen %q): the control proves nothing", seen)
			}
			if strings.Contains(stderr, openai) || strings.Contains(stderr, hf) {
				t.Errorf("stderr shows a key:\n%s", stderr)
			}
		})
	}
}

// Issue 18 item 19: a --config file has a size bound, as config.json has: a 50 MB
// YAML took 880 MB of memory and wrote a 100 MB trace. A file above the bound is a
// usage error naming the file, read no further than the bound.
func TestRunConfigSizeBounded(t *testing.T) {
	big := "notes: \"" + strings.Repeat("x", 2<<20) + "\"\nconcurrency: [1]\n"
	path := writeConfig(t, "big.yaml", big)
	code, _, stderr := runRecordArgs(nil, "--config", path, "--url", "http://127.0.0.1:1", "-o", filepath.Join(t.TempDir(), "o.parquet"))
	if code != exitUsage || !strings.Contains(stderr, path) || !strings.Contains(stderr, "larger than") {
		t.Errorf("exit %d, want %d naming %s and its size:\n%.300s", code, exitUsage, path, stderr)
	}
}
