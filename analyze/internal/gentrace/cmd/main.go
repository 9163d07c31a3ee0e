// Command gentrace writes a large synthetic ceiling trace for the analyzer benchmark:
//
//	go run ./analyze/internal/gentrace/cmd -o /tmp/big.parquet -requests 1000000 -chunks 100
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ceiling-llm/ceiling/analyze/internal/gentrace"
)

func main() {
	out := flag.String("o", "big.parquet", "trace file to write")
	requests := flag.Int("requests", 1_000_000, "measured requests")
	chunks := flag.Int("chunks", 100, "token chunks per request")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := gentrace.Write(*out, gentrace.Config{Requests: *requests, Chunks: *chunks, Seed: *seed}); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
}
