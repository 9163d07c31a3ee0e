// Package gentrace writes large synthetic ceiling traces for benchmarks: a closed-loop
// sweep with realistic-looking timings, streamed to Parquet in row groups so that
// generating 100M chunk gaps takes little memory.
package gentrace

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
	"github.com/parquet-go/parquet-go"
)

// Config sizes a generated trace.
type Config struct {
	Requests int   // total measured requests, spread evenly over the levels
	Chunks   int   // token chunks per request (Chunks−1 gaps)
	Levels   []int // concurrency of each level; default 1, 2, 4, ..., 128
	Seed     uint64
	// RowGroupRows is the row-group size (default 65,536).
	RowGroupRows int
}

// Write generates the trace described by cfg at path.
func Write(path string, cfg Config) error {
	if cfg.Requests <= 0 || cfg.Chunks <= 0 {
		return fmt.Errorf("gentrace: requests and chunks must be positive")
	}
	if len(cfg.Levels) == 0 {
		cfg.Levels = []int{1, 2, 4, 8, 16, 32, 64, 128}
	}
	if cfg.RowGroupRows <= 0 {
		cfg.RowGroupRows = 64 << 10
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := trace.RunInfo{
		Tool: "ceiling", Version: "gentrace", RunID: "gentrace", Started: start,
		Target: trace.Target{BaseURL: "http://synthetic", Endpoint: "chat", Model: "synthetic"},
		Plan:   trace.Plan{Mode: "closed", Concurrency: cfg.Levels, RequestsPerLevel: cfg.Requests / len(cfg.Levels), Seed: cfg.Seed},
		Server: trace.ServerInfo{Kind: "unknown"},
	}
	meta, err := json.Marshal(info)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	w := parquet.NewGenericWriter[trace.Row](f,
		parquet.KeyValueMetadata(trace.MetaSchemaVersion, trace.SchemaVersion),
		parquet.KeyValueMetadata(trace.MetaRun, string(meta)),
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(int64(cfg.RowGroupRows)),
	)
	const batch = 1024
	buf := make([]trace.Row, 0, batch)
	gapPool := make([]int32, batch*(cfg.Chunks-1))
	flush := func() error {
		if _, err := w.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		return nil
	}
	var id int64
	now := start.UnixNano()
	for li, conc := range cfg.Levels {
		n := cfg.Requests / len(cfg.Levels)
		if li == len(cfg.Levels)-1 {
			n = cfg.Requests - n*(len(cfg.Levels)-1)
		}
		free := make([]int64, conc) // when each worker is next free
		for k := range free {
			free[k] = now + int64(k)*int64(time.Millisecond)
		}
		// The server slows down as concurrency grows: longer TTFT and gaps.
		ttftBase := 50e6 * (1 + float64(conc)/16)
		gapBase := 8000 * (1 + float64(conc)/32)
		for i := range n {
			wk := i % conc
			sent := free[wk]
			ttft := int64(ttftBase * (0.8 + 0.4*rng.Float64()))
			gs := gapPool[len(buf)*(cfg.Chunks-1) : (len(buf)+1)*(cfg.Chunks-1)]
			var sum int64
			for k := range gs {
				g := int32(gapBase * (0.7 + 0.6*rng.Float64()))
				if rng.IntN(200) == 0 { // an occasional stall: prefill of a new request
					g *= 8
				}
				gs[k] = g
				sum += int64(g)
			}
			first := sent + ttft
			end := first + sum*1000
			free[wk] = end + int64(rng.IntN(200_000))
			id++
			out := int32(cfg.Chunks)
			prompt := int32(1024)
			fin := "length"
			buf = append(buf, trace.Row{
				RunID: "gentrace", Level: int32(li), Concurrency: int32(conc), RequestID: id, Worker: int32(wk),
				ScheduledNs: sent, SentNs: sent, FirstTokenNs: &first, FirstContentNs: &first, EndNs: end,
				ChunkGapsUs: gs, PromptTokens: &prompt, OutputTokens: &out, TokensSource: "usage",
				TargetPromptTokens: 1024, MaxTokens: out, Status: 200, FinishReason: &fin,
			})
			if len(buf) == batch {
				if err := flush(); err != nil {
					f.Close()
					return fmt.Errorf("writing %s: %w", path, err)
				}
			}
		}
		for _, t := range free {
			now = max(now, t)
		}
		now += int64(time.Second)
	}
	if err := flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
