package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// TestReplayMooncakeEndToEnd records record/testdata/mooncake-sample.jsonl with
// `ceiling record --replay` (the format told from the file) at speeds 1 and 2, and
// analyzes it: both levels hold the trace's 7 requests, the run info carries the
// trace's shared blocks, and the verdict says how many of its blocks repeat an
// earlier request's leading blocks (7 of 18).
func TestReplayMooncakeEndToEnd(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "mooncake.parquet")
	ceiling(t, "record", "--url", eng.URL(), "--replay", "../../record/testdata/mooncake-sample.jsonl", "--replay-speed", "1,2", "--seed", "5", "-o", out)
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", out, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	if len(r.Levels) != 2 || r.Levels[0].Requests != 7 || r.Levels[1].Requests != 7 {
		t.Fatalf("levels %+v; want two of 7 requests", r.Levels)
	}
	var info struct {
		Plan struct {
			ReplayFormat string `json:"replay_format"`
		} `json:"plan"`
		ReplayPrefix struct {
			Blocks             int     `json:"blocks"`
			SharedPrefixBlocks []int32 `json:"shared_prefix_blocks"`
		} `json:"replay_prefix"`
	}
	if err := json.Unmarshal(r.Info, &info); err != nil || info.Plan.ReplayFormat != "mooncake" || info.ReplayPrefix.Blocks != 18 || len(info.ReplayPrefix.SharedPrefixBlocks) != 7 {
		t.Errorf("run info %s (%v); want replay_format mooncake and replay_prefix with 18 blocks over 7 requests", r.Info, err)
	}
	if ev := strings.Join(r.Ceiling.Evidence, "\n"); !strings.Contains(ev, "the replayed mooncake trace repeats 39% of its prompt blocks (7 of 18 blocks of 512 tokens, 3 prefix groups)") {
		t.Errorf("the verdict's evidence lacks the trace's shared blocks:\n%s", ev)
	}
}
