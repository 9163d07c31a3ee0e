package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capacityFlagNames are the flags capacityFlags defines; record takes the first seven
// (the deployment).
var capacityFlagNames = []string{"--model-config", "--gpu ", "--gpus", "--tp", "--dp", "--pp", "--ep", "--gpu-memory-gib", "--gpu-util",
	"--weights-gib", "--reserve-gib", "--engine", "--max-num-batched-tokens", "--max-num-seqs", "--kv-dtype", "--weight-dtype", "--params-b", "--max-model-len"}

// helpLine returns the --help line of flag in out, spaces collapsed (pflag pads the
// names to the longest flag of each subcommand).
func helpLine(out, flag string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, " ") && strings.HasPrefix(strings.TrimSpace(l), flag) {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

// Every subcommand describes a capacity flag the same way, defaults included: plan used
// to default --tp to 1 and --reserve-gib to 1, analyze --tp to --gpus and
// --reserve-gib to -1.
func TestCapacityFlagsSameEverywhere(t *testing.T) {
	helps := map[string]string{}
	for _, cmd := range []string{"plan", "analyze", "report", "record"} {
		code, out, errs := runCLI(cmd, "--help")
		if code != exitOK {
			t.Fatalf("%s --help: exit %d: %s", cmd, code, errs)
		}
		helps[cmd] = out
	}
	for i, flag := range capacityFlagNames {
		want := helpLine(helps["plan"], flag)
		if want == "" {
			t.Fatalf("plan --help lacks %s", flag)
		}
		for _, cmd := range []string{"analyze", "report", "record"} {
			if cmd == "record" && i >= 7 {
				if got := helpLine(helps[cmd], flag); got != "" {
					t.Errorf("record has the budget flag %s: %q", flag, got)
				}
				continue
			}
			if got := helpLine(helps[cmd], flag); got != want {
				t.Errorf("%s %s:\n  %q\nplan:\n  %q", cmd, flag, got, want)
			}
		}
	}
	if !strings.Contains(helpLine(helps["plan"], "--tp"), "default: --gpus") {
		t.Errorf("--help does not document that --tp defaults to --gpus: %q", helpLine(helps["plan"], "--tp"))
	}
}

// --gpus 8 without --tp is one engine at TP 8, in plan as in analyze (TestBuildCapacity
// TPZeroMeansAllGPUs); plan used to read it as 8 replicas at TP 1.
func TestPlanTPDefaultsToGPUs(t *testing.T) {
	code, out, errs := runPlanArgs("--model-config", "../../samples/models/llama-3.1-70b.json", "--gpu", "h100-sxm", "--gpus", "8")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "8 GPUs at TP 8: one serving engine") || !strings.Contains(out, "40,960 bytes per GPU") {
		t.Errorf("--gpus 8 alone is not TP 8:\n%s", out)
	}
}

func TestCapacityFlagErrors(t *testing.T) {
	llama := "../../samples/models/llama-3.1-8b.json"
	noVocab := filepath.Join(t.TempDir(), "config.json") // the weight estimate needs vocab_size
	if err := os.WriteFile(noVocab, []byte(`{"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,"intermediate_size":128}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"negative reserve", []string{"--model-config", llama, "--gpu", "h100", "--reserve-gib", "-1"}, exitUsage, "--reserve-gib must not be negative"},
		{"tp above gpus", []string{"--model-config", llama, "--gpu", "h100", "--gpus", "4", "--tp", "8"}, exitUsage, "--tp 8 is larger than --gpus 4"},
		{"gpus not a multiple of tp", []string{"--model-config", llama, "--gpu", "h100", "--gpus", "3", "--tp", "2"}, exitUsage, "--gpus 3 is not a multiple of --tp 2"},
		{"library error names flags", []string{"--model-config", noVocab, "--gpu", "h100"}, exitFailed, "or set --weights-gib"},
		{"bad kv dtype", []string{"--model-config", llama, "--gpu", "h100", "--kv-dtype", "int3"}, exitUsage, "--kv-dtype"},
	}
	for _, tt := range tests {
		code, out, errs := runPlanArgs(tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) || strings.Contains(out+errs, "BudgetInput") {
			t.Errorf("%s: exit %d, want %d with %q and no field name in:\n%s%s", tt.name, code, tt.code, tt.want, out, errs)
		}
	}
	code, _, errs := runCLI("record", "--url", "http://127.0.0.1:1", "--concurrency", "1", "--gpus", "2", "--tp", "4", "-o", t.TempDir()+"/x.parquet")
	if code != exitUsage || !strings.Contains(errs, "--tp 4 is larger than --gpus 2") {
		t.Errorf("record --gpus 2 --tp 4: exit %d: %s", code, errs)
	}
}

func TestDeclaredDeployment(t *testing.T) {
	tests := []struct{ gpus, tp, wantGPUs, wantTP int }{
		{0, 0, 0, 0}, // nothing declared: nothing stored
		{8, 0, 8, 8},
		{0, 4, 4, 4},
		{16, 8, 16, 8},
	}
	for _, tt := range tests {
		c := capacityFlags{gpus: tt.gpus, tp: tt.tp}
		if g, tp := c.declared(); g != tt.wantGPUs || tp != tt.wantTP {
			t.Errorf("--gpus %d --tp %d: declared GPUs %d TP %d, want %d and %d", tt.gpus, tt.tp, g, tp, tt.wantGPUs, tt.wantTP)
		}
	}
}

func TestFlagError(t *testing.T) {
	err := flagError(errors.New("no GPU memory: set BudgetInput.GPU (a catalog name) or BudgetInput.MemoryGiB; BudgetInput.GPUs 3"))
	if want := "no GPU memory: set --gpu (a catalog name) or --gpu-memory-gib; --gpus 3"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	if flagError(nil) != nil {
		t.Error("flagError(nil) is not nil")
	}
}
