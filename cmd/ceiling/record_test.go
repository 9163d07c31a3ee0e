package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// fileLimit is this process's RLIMIT_NOFILE.
func fileLimit(t *testing.T) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip("no RLIMIT_NOFILE here")
	}
	if lim.Cur > 1<<20 {
		t.Skipf("RLIMIT_NOFILE %d is above the largest concurrency allowed", lim.Cur)
	}
	return lim.Cur
}

// Issue 8 item 7: a concurrency the process cannot open sockets for is refused.
func TestRecordCLIConcurrencyBeyondFileLimit(t *testing.T) {
	code, _, stderr := runRecordArgs(nil, "--url", "http://127.0.0.1:1", "--concurrency", fmt.Sprint(fileLimit(t)+1),
		"-o", filepath.Join(t.TempDir(), "run.parquet"))
	if code != exitUsage || !strings.Contains(stderr, "ulimit -n") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 naming ulimit -n", code, stderr)
	}
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
		// The key itself typed as the variable's name is refused without echoing it.
		{"key as key env", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--api-key-env", "sk-typed-key-123", "-o", out}, 2, "not the key itself"},
		{"empty key env", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--api-key-env", "NOPE", "-o", out}, 2, "$NOPE is empty"},
		// Issue 8 item 4: an existing trace is refused unless --force.
		{"existing output", key("sk-cli-secret"), []string{"--url", eng.URL(), "--concurrency", "1", "-o", out}, 1, "pass --force"},
		// Item 5: token counts beyond int32 (and beyond any context) are usage errors.
		{"output tokens beyond int32", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--output-tokens", "3000000000", "-o", out + "5"}, 2, "--output-tokens"},
		{"prompt tokens beyond int32", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--prompt-tokens", "2147483648", "-o", out + "5"}, 2, "--prompt-tokens 2147483648"},
		// Item 7: fewer requests than workers, or more workers than open files.
		{"requests below concurrency", nil, []string{"--url", eng.URL(), "--concurrency", "1,8", "--requests-per-level", "4", "-o", out + "5"}, 2, "pass --requests-per-level 8"},
		// Item 16: a typed zero is refused, not replaced by the default; a bad --url is a usage error.
		{"prompt tokens 0", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--prompt-tokens", "0", "-o", out + "5"}, 2, "--prompt-tokens 0: must be positive"},
		{"requests per level 0", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--requests-per-level", "0", "-o", out + "5"}, 2, "--requests-per-level 0: must be positive"},
		{"repeat 0", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--repeat", "0", "-o", out + "5"}, 2, "--repeat 0: must be positive"},
		{"repeat too many", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--repeat", "101", "-o", out + "5"}, 2, "--repeat 101"},
		{"timeout 0s", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--timeout", "0s", "-o", out + "5"}, 2, "--timeout 0s: must be positive"},
		{"request timeout 0s", nil, []string{"--url", eng.URL(), "--concurrency", "1", "--request-timeout", "0s", "-o", out + "5"}, 2, "--request-timeout 0s"},
		{"invalid url scheme", nil, []string{"--url", "ftp://h:1", "--concurrency", "1", "-o", out + "5"}, 2, "invalid --url"},
		{"invalid url", nil, []string{"--url", "http://[::1", "--concurrency", "1", "-o", out + "5"}, 2, "invalid --url"},
		{"url without host", nil, []string{"--url", "http://", "--concurrency", "1", "-o", out + "5"}, 2, "no host"},
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
