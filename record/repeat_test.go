package record

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestRecordRepeat records every level twice, back to back: each repeat its own
// level index, marked with its repeat, and the plan stores the count so that
// --resume (tested below it) continues the same plan.
func TestRecordRepeat(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1, 2}
	o.Repeat = 2
	o.crashAfterLevels = 3 // killed after the first repeat of c=2
	if _, err := Record(context.Background(), o); !errors.Is(err, errSimulatedCrash) {
		t.Fatalf("err %v", err)
	}
	o.crashAfterLevels, o.Resume = 0, true
	// Another repeat count is another experiment: --resume refuses it.
	bad := o
	bad.Repeat = 3
	if _, err := Record(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "plan differs") {
		t.Errorf("resume with --repeat 3: %v", err)
	}
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, info := readTrace(t, o.Output)
	if info.Plan.Repeat != 2 {
		t.Errorf("plan repeat %d, want 2", info.Plan.Repeat)
	}
	type want struct{ level, concurrency, repeat int }
	wants := []want{{0, 1, 0}, {1, 1, 1}, {2, 2, 0}, {3, 2, 1}}
	if len(info.Levels) != len(wants) {
		t.Fatalf("%d levels, want %d: %+v", len(info.Levels), len(wants), info.Levels)
	}
	for i, w := range wants {
		l := info.Levels[i]
		if (want{l.Level, l.Concurrency, l.Repeat}) != w {
			t.Errorf("level %d = {level %d, c=%d, repeat %d}, want %+v", i, l.Level, l.Concurrency, l.Repeat, w)
		}
	}
	perLevel := map[int32]int{}
	for _, r := range rows {
		perLevel[r.Level]++
		if want := wants[r.Level].concurrency; int(r.Concurrency) != want {
			t.Errorf("row of level %d has c=%d, want %d", r.Level, r.Concurrency, want)
		}
	}
	for l := range wants {
		if perLevel[int32(l)] != o.RequestsPerLevel {
			t.Errorf("level %d has %d rows, want %d", l, perLevel[int32(l)], o.RequestsPerLevel)
		}
	}

}

func TestRepeatValidate(t *testing.T) {
	for _, n := range []int{-1, MaxRepeat + 1} {
		o := Options{URL: "http://x", Output: "o.parquet", Concurrency: []int{1}, Repeat: n}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "Options.Repeat") {
			t.Errorf("--repeat %d: %v", n, err)
		}
	}
}
