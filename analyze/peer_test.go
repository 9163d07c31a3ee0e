package analyze

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// peerDir holds real vLLM `bench serve` results with per-request arrays and vLLM's
// own summary numbers (see its INDEX.md). It is read in place, never copied.
const peerDir = "../../shared/peer-results"

// peerResult is the part of a vLLM benchmark result this test uses.
type peerResult struct {
	OutputLens []int       `json:"output_lens"`
	TTFTs      []float64   `json:"ttfts"`
	ITLs       [][]float64 `json:"itls"`
	StartTimes []float64   `json:"start_times"`
	Errors     []string    `json:"errors"`
	// Summary numbers in ms, as vLLM computed them.
	Summary map[string]any `json:"-"`
}

func loadPeerResults(t *testing.T) map[string]peerResult {
	t.Helper()
	if _, err := os.Stat(peerDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("peer results missing at %s: %v", peerDir, err)
		}
		t.Skipf("peer results not found at %s (%v)", peerDir, err)
	}
	files, err := filepath.Glob(filepath.Join(peerDir, "*.json*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no peer result files in %s: %v", peerDir, err)
	}
	out := map[string]peerResult{}
	add := func(name string, data []byte) {
		var r peerResult
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
