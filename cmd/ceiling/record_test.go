package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

func runRecordArgs(getenv func(string) string, args ...string) (int, string, string) {
	var stdout, stderr strings.Builder
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	e := env{stdout: &stdout, stderr: &stderr, getenv: getenv}
	code := run(context.Background(), e, append([]string{"record"}, args...))
	return code, stdout.String(), stderr.String()
}

func TestRecordCLI(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", APIKey: "sk-cli-secret"})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "run.parquet")
	key := func(k string) func(string) string {
		return func(name string) string {
			if name == "OPENAI_API_KEY" || name == "ALT_KEY" {
				return k
			}
			return ""
		}
	}
	tests := []struct {
		name   string
		getenv func(string) string
		args   []string
		code   int
		want   string // in stderr
	}{
		{"ok", key("sk-cli-secret"), []string{"--url", eng.URL(), "--concurrency", "1,2", "--requests-per-level", "3",
			"--prompt-tokens", "20", "--output-tokens", "4", "-o", out, "--gpu", "h100-sxm", "--notes", "n"}, 0, "wrote " + out},
		{"wrong key", key("sk-wrong"), []string{"--url", eng.URL(), "--concurrency", "1", "-o", out + "2"}, 1,
			"the server refused the API key from $OPENAI_API_KEY"},
		{"other env", key("sk-wrong"), []string{"--url", eng.URL(), "--concurrency", "1", "--api-key-env", "ALT_KEY", "-o", out + "3"}, 1,
			"$ALT_KEY"},
		{"no url", nil, []string{"--concurrency", "1", "-o", out}, 2, "--url is required"},
		{"no levels", nil, []string{"--url", eng.URL(), "-o", out}, 2, "no sweep"},
		{"bad level", nil, []string{"--url", eng.URL(), "--concurrency", "1,x", "-o", out}, 2, "not a positive integer"},
		{"both modes", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--rate", "2", "-o", out}, 2, "exclude"},
		{"no output", nil, []string{"--url", eng.URL(), "--concurrency", "1"}, 2, "-o FILE"},
		{"empty key env", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--api-key-env", "NOPE", "-o", out}, 2, "$NOPE is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runRecordArgs(tt.getenv, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nwant %q", code, tt.code, stderr, tt.want)
			}
			if strings.Contains(stderr, "sk-") {
				t.Errorf("stderr shows a key:\n%s", stderr)
			}
		})
	}
	raw, err := os.ReadFile(out)
	if err != nil || strings.Contains(string(raw), "sk-cli-secret") {
		t.Errorf("trace missing or holding the key: %v", err)
	}
	code, stdout, _ := runRecordArgs(nil, "--help")
	if code != 0 || !strings.Contains(stdout, "Example:") {
		t.Errorf("--help: exit %d\n%s", code, stdout)
	}
}
