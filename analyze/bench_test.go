package analyze

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze/internal/gentrace"
	"github.com/ceiling-llm/ceiling/trace"
)

// BenchmarkAnalyze analyzes a generated trace of 20,000 requests × 100 chunks (about
// 2M chunk gaps). Compare runs with benchstat; scripts/bench-analyze.sh measures the
// whole process on 1M requests against DuckDB.
func BenchmarkAnalyze(b *testing.B) {
	for _, tc := range []struct {
		name             string
		requests, chunks int
	}{
		{"requests=20000/chunks=100", 20000, 100},
		{"requests=100000/chunks=10", 100000, 10},
	} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.parquet")
			if err := gentrace.Write(path, gentrace.Config{Requests: tc.requests, Chunks: tc.chunks, Seed: 1}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tc.requests*(tc.chunks-1))*float64(b.N)/b.Elapsed().Seconds(), "gaps/s")
		})
	}
}

// BenchmarkGapHist is the pooled-ITL counting histogram alone.
func BenchmarkGapHist(b *testing.B) {
	gaps := make([]int32, 100)
	for i := range gaps {
		gaps[i] = int32(8000 + i*37)
	}
	var h gapHist
	b.ReportAllocs()
	for b.Loop() {
		h.addAll(gaps)
	}
	b.ReportMetric(float64(len(gaps))*float64(b.N)/b.Elapsed().Seconds(), "gaps/s")
}

// BenchmarkBootstrap measures what the error bars add: the same analysis with the
// bootstrap on (1000 resamples) and off, on the committed sample sweep and on the
// generated 20,000-request trace.
func BenchmarkBootstrap(b *testing.B) {
	gen := filepath.Join(b.TempDir(), "bench.parquet")
	if err := gentrace.Write(gen, gentrace.Config{Requests: 20000, Chunks: 100, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	for _, src := range []struct{ name, path string }{
		{"sample", "../samples/llamacpp-d768-4slots.parquet"},
		{"gentrace=20000", gen},
	} {
		for _, mode := range []struct {
			name      string
			resamples int
		}{{"bootstrap=off", -1}, {"bootstrap=1000", 0}} {
			b.Run(src.name+"/"+mode.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := Analyze(context.Background(), []string{src.path}, Options{TimelineLevel: -1, Resamples: mode.resamples}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkLevelMemory is the per-request memory the statistics passes keep: a
// generated trace of one level goes through the window, statistics and workload
// passes, and retained-B/req is the live heap they hold afterwards (after a GC)
// divided by the requests. With the per-request values spilled (the default) it
// must fall as requests grow, since what is held is a fixed chunk per column; with
// everything in memory (spill=off, the analysis before spilling) it stays near the
// 8 bytes × values of every request. The property checked is the ratio between
// the two sizes, not a time.
func BenchmarkLevelMemory(b *testing.B) {
	for _, requests := range []int{20000, 200000} {
		path := filepath.Join(b.TempDir(), "bench.parquet")
		if err := gentrace.Write(path, gentrace.Config{Requests: requests, Chunks: 4, Levels: []int{16}, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name  string
			chunk int
		}{{"spill=on", 0}, {"spill=off", -1}} {
			b.Run(fmt.Sprintf("requests=%d/%s", requests, mode.name), func(b *testing.B) {
				b.Setenv("TMPDIR", b.TempDir())
				ctx := context.Background()
				f := trace.File{Name: path}
				var retained float64
				b.ReportAllocs()
				for b.Loop() {
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					dir := &spillDir{chunk: mode.chunk}
					wp := newWindowPass()
					if err := scanTrace(ctx, f, windowColumns(), wp.batch); err != nil {
						b.Fatal(err)
					}
					sp := newStatsPass(SLO{}, wp.levels)
					sp.spill = dir
					if err := scanTrace(ctx, f, statsColumns(), sp.batch); err != nil {
						b.Fatal(err)
					}
					wlp := newWorkloadPass(dir)
					if err := wlp.scan(ctx, f); err != nil {
						b.Fatal(err)
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					retained = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(requests)
					runtime.KeepAlive(sp)
					runtime.KeepAlive(wlp)
					if err := dir.close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(retained, "retained-B/req")
			})
		}
	}
}
