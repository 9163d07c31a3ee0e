package importer_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/ceiling-llm/ceiling/importer/importanalysis"
)

var updatePeerLevels = flag.Bool("update", false, "rewrite analyze/testdata/validation/peer-levels.csv from the shared peer results")

// TestValidationPeerLevels checks that analyze/testdata/validation/peer-levels.csv,
// the per-level figures the validation table (analyze TestValidation) scores
// against, is what ceiling's analysis of the shared H100 and L40S vLLM sweeps
// gives; -update rewrites it.
func TestValidationPeerLevels(t *testing.T) {
	var b strings.Builder
	b.WriteString("curve,concurrency,valid,decode_concurrency,output_tok_s,per_user_tok_s,mean_prompt_tokens,mean_output_tokens\n")
	for _, d := range []struct{ name, glob string }{
		{"llama8b-h100-fp16", "aurotripathy-vllm-bench-h100-fp16-*.json"},
		{"llama8b-l40s-fp8", "aurotripathy-vllm-bench-l40s-fp8-*.json"},
	} {
		files, _ := filepath.Glob(filepath.Join(peerDir(t), d.glob))
		if len(files) == 0 {
			t.Fatalf("no %s in %s", d.glob, peerDir(t))
		}
		run, err := importer.Import(context.Background(), files, importer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		runs, err := importanalysis.Analyze(context.Background(), run, importer.WriteOptions{}, analyze.Options{TimelineLevel: -1, Resamples: -1})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range runs[0].Levels {
			fmt.Fprintf(&b, "%s,%d,%t,%.4f,%.4f,%.4f,%.2f,%.2f\n", d.name, l.Concurrency, l.Valid, l.DecodeConcurrency, l.OutputTokS, l.PerUserTokS, l.MeanPromptTokens, l.MeanOutputTokens)
		}
	}
	path := filepath.Join("..", "analyze", "testdata", "validation", "peer-levels.csv")
	if *updatePeerLevels {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != b.String() {
		t.Errorf("%s is not what the analysis of the peer sweeps gives (%v): run go test ./importer -run TestValidationPeerLevels -update", path, err)
	}
}
