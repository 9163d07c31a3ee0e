package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// Issue 18 item 3: a credential in the --url query string was dropped from the
// requests but stored verbatim in the trace. A --url with a query is refused
// before anything is sent (without echoing it); a --metrics-url's query, which is
// sent to scrape, is stored nowhere.
func TestURLQueryCredentialNeverStored(t *testing.T) {
	const secret = "sk-query-secret-77"
	t.Run("url query refused", func(t *testing.T) {
		code, _, stderr := runRecordArgs(nil, "--url", "http://127.0.0.1:1/v1?api_key="+secret, "--concurrency", "1", "-o", filepath.Join(t.TempDir(), "r.parquet"))
		if code != exitUsage || !strings.Contains(stderr, "query") {
			t.Errorf("exit %d, want %d with a message naming the query:\n%s", code, exitUsage, stderr)
		}
		if strings.Contains(stderr, secret) {
			t.Errorf("the message echoes the secret:\n%s", stderr)
		}
	})
	t.Run("metrics-url query not stored", func(t *testing.T) {
		eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
		defer eng.Close()
		out := filepath.Join(t.TempDir(), "r.parquet")
		stderr := mustRecord(t, "--url", eng.URL(), "--metrics-url", eng.URL()+"/metrics?token="+secret,
			"--concurrency", "1", "--requests-per-level", "2", "--prompt-tokens", "20", "--output-tokens", "4", "-o", out)
		info, err := trace.ReadInfo(out)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(info)
		raw, _ := os.ReadFile(out)
		for name, s := range map[string]string{"run info": string(b), "trace file": string(raw), "stderr": stderr} {
			if strings.Contains(s, secret) {
				t.Errorf("%s holds the query's secret", name)
			}
		}
		if info.Server.MetricsURL == "" {
			t.Error("no metrics URL stored: the test proves nothing")
		}
	})
}
