package main

import (
	"strings"
	"testing"
)

// Issue 18 item 17: an invalid --to-* value (negative, NaN, 0, 1e308, an unknown
// dtype or GPU) is a usage error naming the flag (exit 2), as plan's are; it was
// silently ignored with exit 0, and 1e308 printed a 300-digit number.
func TestWhatIfRefusesInvalidChanges(t *testing.T) {
	base := []string{"whatif", "../../samples/llamacpp-d768-4slots.parquet", "--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm"}
	tests := []struct{ flag, value string }{
		{"--to-prompt-tokens", "-5"},
		{"--to-prompt-tokens", "NaN"},
		{"--to-prompt-tokens", "0"},
		{"--to-prompt-tokens", "1e308"},
		{"--to-output-tokens", "-1"},
		{"--to-output-tokens", "+Inf"},
		{"--to-max-model-len", "0"},
		{"--to-gpus", "0"},
		{"--to-gpus", "-2"},
		{"--to-tp", "0"},
		{"--to-dp", "-1"},
		{"--to-pp", "0"},
		{"--to-kv-dtype", "fp7"},
		{"--to-weight-dtype", "fp7"},
		{"--to-weight-dtype", ""},
		{"--to-gpu", "no-such-gpu"},
		{"--to-prefix-tokens", "-1"},
		{"--to-prefix-hit-rate", "1"},
		{"--to-prefix-hit-rate", "-0.2"},
	}
	for _, tt := range tests {
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) {
			code, stdout, stderr := runCLI(append(base, tt.flag, tt.value)...)
			if code != exitUsage || !strings.Contains(stderr, tt.flag) {
				t.Errorf("exit %d, want %d naming %s\nstdout: %.300s\nstderr: %s", code, exitUsage, tt.flag, stdout, stderr)
			}
		})
	}
}

// --to-weight-dtype takes the 4-bit formats --weight-dtype takes (a KV dtype check
// refused int4 and nvfp4).
func TestWhatIfWeightDtypes(t *testing.T) {
	base := []string{"whatif", "../../samples/llamacpp-d768-4slots.parquet", "--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm"}
	for _, d := range []string{"int4", "nvfp4", "fp8", "bf16"} {
		code, stdout, stderr := runCLI(append(base, "--to-weight-dtype", d)...)
		if code != exitOK || !strings.Contains(stdout, "--to-weight-dtype "+d) {
			t.Errorf("--to-weight-dtype %s: exit %d\n%s\n%s", d, code, stdout, stderr)
		}
	}
}
