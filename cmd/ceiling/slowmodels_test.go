package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// Issue 18 item 13: a /v1/models answer slower than the probe's limit failed the
// run as "cannot reach the server", even with --model given (scale-to-zero
// endpoints wake slowly). The limit is a flag (--probe-timeout); what happened is
// named; with --model the run goes on. The model list here never answers: the
// handler waits until the client gives up.
func TestSlowModelListNamedAndSkippedWithModel(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	target, _ := url.Parse(eng.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			<-r.Context().Done()
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	args := func(extra ...string) []string {
		return append([]string{"--url", srv.URL, "--concurrency", "1", "--requests-per-level", "2", "--prompt-tokens", "20",
			"--output-tokens", "4", "--metrics-url", "off", "--probe-timeout", "300ms", "-o", filepath.Join(t.TempDir(), "r.parquet")}, extra...)
	}
	code, _, stderr := runRecordArgs(nil, args("--model", "m")...)
	if code != exitOK || !strings.Contains(stderr, "/v1/models did not answer within 300ms") {
		t.Errorf("with --model: exit %d, want %d and a note naming the slow model list:\n%s", code, exitOK, stderr)
	}
	code, _, stderr = runRecordArgs(nil, args()...)
	if code != exitFailed || strings.Contains(stderr, "cannot reach") || !strings.Contains(stderr, "did not answer within 300ms") || !strings.Contains(stderr, "--model") {
		t.Errorf("without --model: exit %d, want %d naming the slow answer and --model, not 'cannot reach':\n%s", code, exitFailed, stderr)
	}
}
