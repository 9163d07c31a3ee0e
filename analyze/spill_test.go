package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze/internal/gentrace"
	"github.com/ceiling-llm/ceiling/trace"
)

// TestSpillColSorted: a spilled column gives back every value, sorted, whether it
// stayed in memory, filled its chunk exactly or spilled several times, and leaves
// no file behind.
func TestSpillColSorted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		spilled bool
	}{
		{"empty", 0, false},
		{"one", 1, false},
		{"under a chunk", 7, false},
		{"one chunk", 8, true},
		{"several chunks and a tail", 3*8 + 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			dir := &spillDir{chunk: 8}
			c := spillCol[int64]{dir: dir}
			var want []int64
			for i := range tc.n {
				v := int64((i*7919)%97) - 40 // unsorted, negative values included
				c.add(v)
				want = append(want, v)
			}
			if dir.err != nil {
				t.Fatal(dir.err)
			}
			if got := c.path != ""; got != tc.spilled {
				t.Fatalf("spilled to disk = %v, want %v", got, tc.spilled)
			}
			if c.len() != tc.n {
				t.Fatalf("len %d, want %d", c.len(), tc.n)
			}
			path := c.path
			got, err := c.sorted()
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("sorted %v, want %v", got, want)
			}
			if path != "" {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("%s still there after reading back (stat: %v)", path, err)
				}
			}
			if err := dir.close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
				t.Errorf("temporary directory not removed: %v", left)
			}
		})
	}
}

// TestSpillColTruncatedFile: a spill file that lost values is an error naming it,
// never a silently shorter level.
func TestSpillColTruncatedFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := &spillDir{chunk: 4}
	defer dir.close()
	c := spillCol[float64]{dir: dir}
	for i := range 9 {
		c.add(float64(i))
	}
	if err := os.Truncate(c.path, 20); err != nil {
		t.Fatal(err)
	}
	if _, err := c.sorted(); err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.path)) {
		t.Fatalf("err = %v, want one naming %s", err, c.path)
	}
}

// TestSpilledAnalysisIsIdentical: the analysis with every per-request value spilled
// to disk (a chunk of 3 values) is byte for byte the analysis with every value in
// memory, on closed- and open-loop levels (send lag, latencies from the scheduled
// send), the committed sample and a generated trace, bootstrap included; and the
// temporary files are gone afterwards.
func TestSpilledAnalysisIsIdentical(t *testing.T) {
	dir := t.TempDir()
	mixed := knownProcess{workers: 4, perWorker: 30, tokens: 6}.rows(1)
	for i := range 40 {
		r := engineRow(1, 0, 0, int64(1000+i), 5000+float64(i)*100+float64(i%7), 10+float64(i%5), gaps(4, int32(9000+100*(i%3))), 5)
		r.RunID = "known"
		r.Rate = 10
		r.ScheduledNs = ms(5000 + float64(i)*100)
		mixed = append(mixed, r)
	}
	info := knownProcessInfo(4)
	info.Levels = append(info.Levels, trace.LevelInfo{Level: 1, Rate: 10})
	gen := dir + "/gen.parquet"
	if err := gentrace.Write(gen, gentrace.Config{Requests: 2000, Chunks: 8, Levels: []int{1, 8}, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{
		{"closed and open loop", writeTrace(t, dir, "mixed.parquet", info, mixed)},
		{"sample", "../samples/llamacpp-d768-4slots.parquet"},
		{"generated", gen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			var out [2][]byte
			for i, chunk := range []int{-1, 3} {
				a, err := Analyze(context.Background(), []string{tc.path}, Options{TimelineLevel: -1, spillChunk: chunk})
				if err != nil {
					t.Fatal(err)
				}
				if out[i], err = json.Marshal(a); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Fatalf("spilled analysis differs from the in-memory one:\nmemory:  %.2000s\nspilled: %.2000s", out[0], out[1])
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("spill files left behind: %v", left)
			}
		})
	}
}
