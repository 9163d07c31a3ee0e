package shard

import (
	"strings"
	"testing"
	"time"
)

func TestWorkersSplitAddsUp(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7} {
		for _, total := range []int{0, 1, 2, 3, 5, 8, 16, 100, 1023} {
			sum, next := 0, 0
			lo, hi := total, 0
			for i := range n {
				s := Spec{Index: i, Count: n}
				w := s.Workers(total)
				if got := s.WorkerBase(total); got != next {
					t.Errorf("%d/%d of %d: worker base %d, want %d (contiguous)", i, n, total, got, next)
				}
				next += w
				sum += w
				lo, hi = min(lo, w), max(hi, w)
			}
			if sum != total {
				t.Errorf("%d shards of %d workers: shares add up to %d", n, total, sum)
			}
			if hi-lo > 1 {
				t.Errorf("%d shards of %d workers: shares from %d to %d, want within one", n, total, lo, hi)
			}
		}
	}
}

func TestRateSplitAddsUp(t *testing.T) {
	var sum float64
	for i := range 3 {
		sum += Spec{Index: i, Count: 3}.Rate(10)
	}
	if sum < 10-1e-9 || sum > 10+1e-9 {
		t.Errorf("rates add up to %v, want 10", sum)
	}
}

func TestSeedsAndIDsDiffer(t *testing.T) {
	if got := (Spec{}).Seed(42); got != 42 {
		t.Errorf("unsharded seed %d, want the base 42", got)
	}
	seeds := map[uint64]int{}
	ids := map[int64]int{}
	for i := range 64 {
		s := Spec{Index: i, Count: 64}
		if j, dup := seeds[s.Seed(1)]; dup {
			t.Fatalf("shards %d and %d draw from one seed", i, j)
		}
		seeds[s.Seed(1)] = i
		if j, dup := ids[s.RequestIDBase()]; dup {
			t.Fatalf("shards %d and %d number requests from one base", i, j)
		}
		ids[s.RequestIDBase()] = i
	}
	if (Spec{Index: 1, Count: 2}).Seed(1) == (Spec{Index: 1, Count: 2}).Seed(2) {
		t.Error("one shard of two sweeps with different seeds draws the same seed")
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{"0/3", Spec{0, 3}, ""},
		{" 2 / 3 ", Spec{2, 3}, ""},
		{"3/3", Spec{}, "runs from 0 to 2"},
		{"-1/3", Spec{}, "runs from 0 to 2"},
		{"1/0", Spec{}, "count 0"},
		{"1", Spec{}, "INDEX/COUNT"},
		{"a/b", Spec{}, "whole numbers"},
		{"0/100000", Spec{}, "want 1 to 4096"},
	} {
		got, err := Parse(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%q): error %v, want one saying %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	if _, ok, err := FromEnv(env(nil)); ok || err != nil {
		t.Errorf("empty environment: ok %v err %v, want not sharded", ok, err)
	}
	s, ok, err := FromEnv(env(map[string]string{EnvIndex: "2", EnvCount: "3"}))
	if !ok || err != nil || s != (Spec{2, 3}) {
		t.Errorf("2 of 3: %v %v %v", s, ok, err)
	}
	if _, _, err := FromEnv(env(map[string]string{EnvIndex: "2"})); err == nil || !strings.Contains(err.Error(), EnvCount) {
		t.Errorf("index without count: %v, want an error naming %s", err, EnvCount)
	}
	if _, _, err := FromEnv(env(map[string]string{EnvIndex: "x", EnvCount: "3"})); err == nil || !strings.Contains(err.Error(), EnvIndex) {
		t.Errorf("bad index: %v, want an error naming %s", err, EnvIndex)
	}
}

func TestScheduleWindows(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	s := Schedule{Start: t0, Level: time.Minute, Gap: 30 * time.Second}
	start, end := s.Window(2)
	if !start.Equal(t0.Add(3*time.Minute)) || !end.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("level 2: %v..%v", start, end)
	}
	if err := (Schedule{Start: t0}).Validate(); err == nil {
		t.Error("a schedule without a level duration was accepted")
	}
}
