package main

import (
	"strings"
	"testing"
)

// whatif on the bundled sample: the measured row beside a PREDICTED one, and clear
// usage errors.
func TestWhatIf(t *testing.T) {
	sample := "../../samples/llamacpp-d768-4slots.parquet"
	llama := "../../samples/models/llama-3.1-8b.json"
	code, out, errs := runCLI("whatif", sample, "--model-config", llama, "--gpu", "h100-sxm", "--to-kv-dtype", "fp8", "--to-prompt-tokens", "8000")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"PREDICTED", "measured", "--kv-dtype fp8, --prompt-tokens 8000", "basis ("} {
		if !strings.Contains(out, want) {
			t.Errorf("whatif output lacks %q:\n%s", want, out)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"whatif", sample}, "--model-config and --gpu"},
		{[]string{"whatif"}, "exactly one run"},
		{[]string{"whatif", sample, "--model-config", llama, "--gpu", "h100-sxm", "--target-rps", "1", "--target-users", "5"}, "not both"},
	} {
		if code, _, errs := runCLI(tt.args...); code != exitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, want usage error with %q: %s", tt.args, code, tt.want, errs)
		}
	}
}
