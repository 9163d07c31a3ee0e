package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18 item 18: plan predicted numbers for shapes no engine runs. Each is now
// refused naming the rule, and prints no prediction: a TP that does not divide the
// attention heads, PP beyond the layer count, more KV heads than attention heads, and
// an empty level in --levels.
func TestPlanRefusesShapesNoEngineRuns(t *testing.T) {
	llama := "../../samples/models/llama-3.1-8b.json" // 32 heads, 8 KV heads, 32 layers
	b, err := os.ReadFile(llama)
	if err != nil {
		t.Fatal(err)
	}
	moreKV := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(moreKV, []byte(strings.Replace(string(b), `"num_key_value_heads": 8`, `"num_key_value_heads": 64`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"tp does not divide heads", []string{"--model-config", llama, "--gpu", "h100-sxm", "--gpus", "3", "--tp", "3"}, exitFailed, "does not divide the model's 32 attention heads"},
		{"pp beyond layers", []string{"--model-config", llama, "--gpu", "h100-sxm", "--gpus", "64", "--tp", "1", "--pp", "64"}, exitFailed, "more than the model's 32 layers"},
		{"kv heads above heads", []string{"--model-config", moreKV, "--gpu", "h100-sxm"}, exitFailed, "num_key_value_heads 64 is above num_attention_heads 32"},
		{"empty level", []string{"--model-config", llama, "--gpu", "h100-sxm", "--levels", "1,,2"}, exitUsage, "empty level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runPlanArgs(tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, want %d with %q\nstdout: %.400s\nstderr: %s", code, tt.code, tt.want, out, errs)
			}
			if strings.Contains(out, "Proposed") || strings.Contains(out, "concurrency") {
				t.Errorf("a prediction was printed for a refused shape:\n%.400s", out)
			}
		})
	}
}
