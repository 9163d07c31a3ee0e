package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestMain lets a test run the real ceiling command as a child process (the test
// binary re-executed with CEILING_TEST_MAIN=1), so that it can be killed for real.
func TestMain(m *testing.M) {
	if os.Getenv("CEILING_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestKill9ThenResume kills a recording process with SIGKILL in the middle of a level:
// every level sealed before the kill must be intact and readable (analyze accepts the
// parts directory), and --resume must finish the sweep from the level in flight.
func TestKill9ThenResume(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: 2 * time.Millisecond})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "run.parquet")
	parts := out + ".parts"
	args := []string{"record", "--url", eng.URL(), "--concurrency", "1,2,4", "--requests-per-level", "16",
		"--prompt-tokens", "20", "--output-tokens", "100", "--metrics-url", "off", "-o", out}

	child, stderr, exited := startRecorder(t, args[1:]...)

	// Kill as soon as level 1 is sealed: level 2 (16 requests of ~200 ms at c=4) is in flight.
	waitFor(t, "level 1 is sealed", stderr, exited, func() bool { return sealed(t, parts, "-rows-L0001.parquet") })
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil {
		t.Fatal("the recorder finished before it could be killed; the test proves nothing")
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the killed recorder left a merged file: it was not killed mid-sweep")
	}

	// What the kill left is readable, and holds levels 0 and 1 whole.
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", parts, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	if got := levelRequests(a); !slices.Equal(got[:min(2, len(got))], []int{16, 16}) {
		t.Fatalf("after kill -9 the parts hold levels with %v requests, want levels 0 and 1 with 16 each", got)
	}

	ceiling(t, append(args, "--resume")...)
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", out, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	if got := levelRequests(a); !slices.Equal(got, []int{16, 16, 16}) {
		t.Fatalf("after --resume the run has levels with %v requests, want [16 16 16]", got)
	}
	for _, l := range a.Runs[0].Levels {
		if l.Errors != 0 {
			t.Errorf("level %d: %d errors", l.Level, l.Errors)
		}
	}
}

func sealed(t *testing.T, dir, suffix string) bool {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) {
			return true
		}
	}
	return false
}

func levelRequests(a analyze.Analysis) []int {
	var n []int
	for _, r := range a.Runs {
		for _, l := range r.Levels {
			n = append(n, l.Requests)
		}
	}
	return n
}
