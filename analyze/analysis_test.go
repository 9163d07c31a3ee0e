package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/safetext"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestAnalysisGolden computes the known trace's analysis and compares its JSON
// with testdata/known.json, which is also the input of package analysistext's
// golden text and Markdown (it renders this file). Run `go test ./analyze -run
// Golden -update` after an intended change, review the diff, then update
// analysistext's goldens the same way.
func TestAnalysisGolden(t *testing.T) {
	path := writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), knownRows())
	a, err := Analyze(context.Background(), []string{path}, Options{SLO: SLO{TTFT: ptr(0.1)}, TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	a.Runs[0].Source = "run.parquet" // not the temporary directory
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// As `ceiling analyze --format json` prints it (analysistext.Write).
	got := append(safetext.Escaped(data), '\n')
	golden := filepath.Join("testdata", "known.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the analysis differs from %s (run with -update and review the diff):\n%s", golden, got)
	}
}

// TestJSONIsTheAnalysis checks that the Analysis JSON is exactly the Analysis
// value: it decodes back into an equal value, with the documented keys and nulls.
func TestJSONIsTheAnalysis(t *testing.T) {
	path := writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), knownRows())
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var back Analysis
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	first, _ := json.Marshal(a)
	if !bytes.Equal(first, again) {
		t.Errorf("JSON does not round-trip:\n%s\n%s", first, again)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["schema"] != Schema {
		t.Errorf("schema = %v", raw["schema"])
	}
	lv := raw["runs"].([]any)[0].(map[string]any)["levels"].([]any)[0].(map[string]any)
	for _, k := range []string{"level", "concurrency", "rate", "requests", "errors", "window_s", "output_tok_s",
		"naive_output_tok_s", "request_s", "goodput_request_s", "decode_concurrency", "waiting_concurrency",
		"ttft_s", "ttfc_s", "tpot_s", "itl_s", "e2e_s"} {
		if _, ok := lv[k]; !ok {
			t.Errorf("level JSON lacks %q", k)
		}
	}
	if lv["goodput_request_s"] != nil {
		t.Errorf("goodput without SLOs = %v, want null", lv["goodput_request_s"])
	}
}
