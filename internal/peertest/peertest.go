// Package peertest reads the shared real vLLM benchmark results (the peer results:
// per-request arrays and vLLM's own summary numbers) for the tests of analyze and
// importer, which check ceiling's figures against vLLM's.
package peertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/sharedtest"
)

// Result is the part of a vLLM benchmark result the tests use.
type Result struct {
	OutputLens []int       `json:"output_lens"`
	TTFTs      []float64   `json:"ttfts"`
	ITLs       [][]float64 `json:"itls"`
	StartTimes []float64   `json:"start_times"`
	Errors     []string    `json:"errors"`
	// Summary numbers in ms, as vLLM computed them.
	Summary map[string]any `json:"-"`
}

// VLLM reads every vLLM result file (*.json, and each line of *.jsonl as
// "FILE#N") of the shared peer results, keyed by file name. Without them it
// skips, and fails under CI=true (see sharedtest.Dir).
func VLLM(t *testing.T) map[string]Result {
	t.Helper()
	dir := sharedtest.Dir(t, "peer-results")
	files, err := filepath.Glob(filepath.Join(dir, "*.json*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no peer result files in %s: %v", dir, err)
	}
	out := map[string]Result{}
	add := func(name string, data []byte) {
		var r Result
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal(data, &r.Summary); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = r
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".jsonl") {
			sc := bufio.NewScanner(strings.NewReader(string(data)))
			sc.Buffer(nil, 64<<20)
			for i := 0; sc.Scan(); i++ {
				add(fmt.Sprintf("%s#%d", filepath.Base(f), i), sc.Bytes())
			}
			continue
		}
		add(filepath.Base(f), data)
	}
	return out
}
