package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// Issue 18 item 14: a sweep whose every measured request failed exits 1 and says
// so on its last line; it exited 0. The engine answers the probe request and fails
// every request of the sweep.
func TestRecordExitsOneWhenEveryRequestFailed(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", Fault: func(i int64) enginetest.Fault {
		if i == 0 {
			return enginetest.FaultNone
		}
		return enginetest.FaultInternal
	}})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "r.parquet")
	code, _, stderr := runRecordArgs(nil, "--url", eng.URL(), "--concurrency", "1,2", "--requests-per-level", "2",
		"--prompt-tokens", "20", "--output-tokens", "4", "--metrics-url", "off", "-o", out)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != exitFailed || !strings.Contains(last, "every") || !strings.Contains(last, "failed") {
		t.Errorf("exit %d, want %d with a last line saying every request failed:\n%s", code, exitFailed, stderr)
	}
}
