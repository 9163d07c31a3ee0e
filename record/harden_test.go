package record

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
	"github.com/parquet-go/parquet-go"
)

// Tests of issue 8 (nothing lost, nothing leaked, nothing hangs), recorder side.
// Each is named after the defect it reproduces; docs/reliability.md maps
// the items to them.

// makeUnwritable makes dir refuse new files, for real: a read-only bind mount when
// running as root (root ignores permission bits), else mode 0555. It returns a
// function that makes it writable again.
func makeUnwritable(t *testing.T, dir string) (undo func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		return func() { _ = os.Chmod(dir, 0o755) }
	}
	if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount %s read-only (%v: %s): run as non-root or with CAP_SYS_ADMIN", dir, err, out)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		_ = exec.Command("umount", dir).Run()
		t.Skipf("cannot remount %s read-only (%v: %s)", dir, err, out)
	}
	var once sync.Once
	undo = func() { once.Do(func() { _ = exec.Command("umount", dir).Run() }) }
	t.Cleanup(undo)
	return undo
}

// Item 1: a part that fails to be written must never be listed as done; --resume
// re-runs the level whose rows are missing.
func TestPartWriteFailureNotListedDone(t *testing.T) {
	var o Options
	var once sync.Once
	var undo func()
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", TokenGap: time.Millisecond,
		Fault: func(int64) enginetest.Fault {
			// The first request after level 0 is sealed: level 1 cannot be written.
			if m, _ := filepath.Glob(filepath.Join(trace.PartsDir(o.Output), "*-rows-L0000.parquet")); len(m) > 0 {
				once.Do(func() { undo = makeUnwritable(t, trace.PartsDir(o.Output)) })
			}
			return enginetest.FaultNone
		}})
	defer eng.Close()
	o = baseOptions(t, eng.URL())
	o.Concurrency = []int{1, 2, 2}
	var progress bytes.Buffer
	o.Progress = &progress
	_, err := Record(context.Background(), o)
	if err == nil {
		t.Fatal("a run whose level 1 could not be written succeeded")
	}
	for _, want := range []string{"level 1", "Options.Resume", trace.PartsDir(o.Output)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if undo == nil {
		t.Fatal("the parts directory was never made unwritable: the test proves nothing")
	}
	// Whatever trace was written lists only levels whose rows it holds.
	if _, serr := os.Stat(o.Output); serr == nil {
		rows, info := readTrace(t, o.Output)
		checkLevelsHaveRows(t, info, rows)
	}
	undo()
	o.Resume = true
	o.Progress = nil
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatalf("--resume after the write failure: %v", err)
	}
	rows, info := readTrace(t, o.Output)
	checkLevelsHaveRows(t, info, rows)
	if len(info.Levels) != 3 || len(rows) != 12 {
		t.Fatalf("after --resume: %d levels, %d rows; want 3 and 12", len(info.Levels), len(rows))
	}
}

func checkLevelsHaveRows(t *testing.T, info trace.RunInfo, rows []trace.Row) {
	t.Helper()
	n := map[int32]int{}
	for _, r := range rows {
		n[r.Level]++
	}
	for _, l := range info.Levels {
		if n[int32(l.Level)] == 0 || n[int32(l.Level)] < l.Requests {
			t.Errorf("level %d is listed done with %d requests, but the trace holds %d rows of it", l.Level, l.Requests, n[int32(l.Level)])
		}
	}
}

// Item 1, resume side: a parts directory whose newest run info lists a level with
// no rows (what the old recorder sealed on the way out) is resumed at that level.
func TestResumeRerunsLevelWithoutRows(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1, 2, 2}
	o.crashAfterLevels = 1
	first, err := Record(context.Background(), o)
	if !errors.Is(err, errSimulatedCrash) {
		t.Fatalf("err %v", err)
	}
	// The metrics part sealed on the way out claims level 1 done; its rows are not there.
	ps, _, err := trace.ResumeParts(trace.PartsDir(o.Output))
	if err != nil {
		t.Fatal(err)
	}
	first.Levels = append(first.Levels, trace.LevelInfo{Level: 1, Concurrency: 2, Requests: 4})
	if err := ps.SealMetrics(1, []trace.MetricSample{{TsNs: 1, Name: "x", Value: 1}}, first); err != nil {
		t.Fatal(err)
	}
	o.crashAfterLevels, o.Resume = 0, true
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, info := readTrace(t, o.Output)
	checkLevelsHaveRows(t, info, rows)
	if len(info.Levels) != 3 || len(rows) != 12 {
		t.Fatalf("%d levels, %d rows after resume; want 3 and 12", len(info.Levels), len(rows))
	}
}

// Item 2: a second run to the same -o never leaves the first run's sidecar; the
// sidecar names its run.
func TestStaleMetricsSidecarReplaced(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	first, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if id := kvMeta(t, trace.MetricsPath(o.Output), trace.MetaRunID); id != first.RunID {
		t.Errorf("sidecar %s = %q, want the run id %q", trace.MetaRunID, id, first.RunID)
	}
	if id := kvMeta(t, o.Output, trace.MetaRunID); id != first.RunID {
		t.Errorf("trace %s = %q, want %q", trace.MetaRunID, id, first.RunID)
	}
	o.MetricsURL, o.Force = "off", true
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(trace.MetricsPath(o.Output)); !os.IsNotExist(err) {
		t.Errorf("the first run's sidecar is still beside the second run's trace (%v)", err)
	}
}

func kvMeta(t *testing.T, path, key string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := pf.Lookup(key)
	return v
}

// Item 4: -o refuses an existing trace and an existing parts directory unless
// --force. Item 19: a parts directory a kill -9 left in level 0 (no sealed part)
// gets advice, and --force replaces it.
func TestExistingOutputRefusedUnlessForce(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1}
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(o.Output)
	_, err := Record(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "exists") || !strings.Contains(err.Error(), "Options.Force") {
		t.Fatalf("second run to an existing trace: %v, want a refusal naming --force", err)
	}
	if after, _ := os.ReadFile(o.Output); !bytes.Equal(before, after) {
		t.Fatal("the refused run changed the existing trace")
	}
	o.Force = true
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if after, _ := os.ReadFile(o.Output); bytes.Equal(before, after) {
		t.Fatal("--force did not replace the trace")
	}
}

func TestKilledInFirstLevelPartsDir(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1}
	// What a kill -9 during level 0 leaves: the directory and a half-written part.
	dir := trace.PartsDir(o.Output)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "000001-rows-L0000.parquet.inprogress"), []byte("half"), 0o644)

	o.Resume = true
	_, err := Record(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "Options.Force") {
		t.Fatalf("--resume of a run killed in level 0: %v, want advice naming --force", err)
	}
	o.Resume = false
	_, err = Record(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "Options.Force") {
		t.Fatalf("fresh run over a parts directory: %v, want advice naming --force", err)
	}
	o.Force = true
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatalf("--force over the parts directory: %v", err)
	}
	if rows, _ := readTrace(t, o.Output); len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
}
