package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 8 item 16 (analyze, report, plan): exit codes follow the README (0 ok, 1 the
// run failed, 2 a usage error) the same way in every subcommand. Invalid flag values
// are usage errors; a flag given as 0 where 0 would silently mean "the default" is
// refused; item 12: flag sizes beyond any plausible deployment are refused.
func TestInvalidFlagValuesAreUsageErrors(t *testing.T) {
	trace := writeAnalyzeFixture(t)
	llama := "../../samples/models/llama-3.1-8b.json"
	prefix := map[string][]string{
		"analyze": {"analyze", trace},
		"report":  {"report", trace, "-o", filepath.Join(t.TempDir(), "r.html")},
		"plan":    {"plan", "--model-config", llama, "--gpu", "h100-sxm"},
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--gpus", "8", "--tp", "3"}, "--gpus 8 is not a multiple of --tp 3"},
		{[]string{"--kv-dtype", "int3"}, "--kv-dtype"},
		{[]string{"--gpu", "h900"}, "--gpu"},
		{[]string{"--gpus", "0"}, "--gpus 0"},
		{[]string{"--tp", "0"}, "--tp 0"},
		{[]string{"--weights-gib", "0"}, "--weights-gib 0"},
		{[]string{"--gpu-memory-gib", "0"}, "--gpu-memory-gib 0"},
		{[]string{"--params-b", "0"}, "--params-b 0"},
		{[]string{"--max-model-len", "0"}, "--max-model-len 0"},
		{[]string{"--gpus", "1000000000"}, "--gpus"},
		{[]string{"--gpu-memory-gib", "1e30"}, "--gpu-memory-gib"},
		{[]string{"--weights-gib", "1e30"}, "--weights-gib"},
		{[]string{"--gpu-util", "NaN"}, "--gpu-util"},
		{[]string{"--params-b", "NaN"}, "--params-b"},
		{[]string{"--max-model-len", "1000000000000"}, "--max-model-len"},
	} {
		for _, cmd := range []string{"analyze", "report", "plan"} {
			args := append(append([]string{}, prefix[cmd]...), tt.args...)
			code, _, errs := runCLI(args...)
			if code != exitUsage || !strings.Contains(errs, tt.want) || strings.Contains(errs, "BudgetInput") {
				t.Errorf("ceiling %s: exit %d, stderr %q; want 2 mentioning %q", strings.Join(args, " "), code, errs, tt.want)
			}
		}
	}
	// plan's own workload flags.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--prompt-tokens", "0"}, "--prompt-tokens"},
		{[]string{"--output-tokens", "0"}, "--output-tokens"},
		{[]string{"--prompt-tokens", "5000000000"}, "--prompt-tokens"},
		{[]string{"--output-tokens", "-3"}, "--output-tokens"},
	} {
		args := append(append([]string{}, prefix["plan"]...), tt.args...)
		code, _, errs := runCLI(args...)
		if code != exitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("ceiling %s: exit %d, stderr %q; want 2 mentioning %q", strings.Join(args, " "), code, errs, tt.want)
		}
	}
	// The deployment check is shared with record.
	code, _, errs := runCLI("record", "--url", "http://127.0.0.1:1", "--concurrency", "1", "--gpus", "8", "--tp", "3", "-o", filepath.Join(t.TempDir(), "x.parquet"))
	if code != exitUsage || !strings.Contains(errs, "--gpus 8 is not a multiple of --tp 3") {
		t.Errorf("record --gpus 8 --tp 3: exit %d: %s", code, errs)
	}
}

// Item 16: `ceiling help analyze` prints analyze's help, like `ceiling analyze --help`.
func TestHelpSubcommand(t *testing.T) {
	for _, cmd := range []string{"analyze", "report", "plan", "record", "import"} {
		code, out, errs := runCLI("help", cmd)
		_, want, _ := runCLI(cmd, "--help")
		if code != exitOK || out != want || !strings.Contains(out, "Usage: ceiling "+cmd) {
			t.Errorf("help %s: exit %d, stderr %q, stdout:\n%s\nwant the output of %s --help", cmd, code, errs, out, cmd)
		}
	}
	if code, _, errs := runCLI("help", "frobnicate"); code != exitUsage || !strings.Contains(errs, "frobnicate") {
		t.Errorf("help frobnicate: exit %d, stderr %q; want 2 naming it", code, errs)
	}
	if code, out, _ := runCLI("help"); code != exitOK || !strings.Contains(out, "Commands:") {
		t.Errorf("help: exit %d, want the command list:\n%s", code, out)
	}
}

// Items 12 and 17 through the command: a hostile config.json gives exit 1 and a
// message naming the field and its value, in plan as in analyze; never a panic.
func TestHostileModelConfig(t *testing.T) {
	dir := t.TempDir()
	trace := writeAnalyzeFixture(t)
	for _, tt := range []struct{ layers, want string }{
		{"1e18", `"num_hidden_layers" is 1e+18, more than any plausible model`},
		{"1e9", `"num_hidden_layers" is 1e+09, more than any plausible model`},
		{`"32"`, `"num_hidden_layers" is "32" (a string)`},
		{"-4", `"num_hidden_layers" is -4, want a whole number of at least 1`},
	} {
		cfg := filepath.Join(dir, "config.json")
		body := `{"num_hidden_layers":` + tt.layers + `,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":1000,"intermediate_size":1000}`
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"plan", "--model-config", cfg, "--gpu", "h100-sxm"},
			{"analyze", trace, "--model-config", cfg, "--gpu", "h100-sxm"},
		} {
			code, _, errs := runCLI(args...)
			if code != exitFailed || !strings.Contains(errs, tt.want) || !strings.Contains(errs, cfg) {
				t.Errorf("%s with num_hidden_layers %s: exit %d, stderr %q; want 1 with %q naming %s", args[0], tt.layers, code, errs, tt.want, cfg)
			}
		}
	}
	body := `{"num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":1000,"intermediate_size":1e17}`
	cfg := filepath.Join(dir, "inter.json")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("plan", "--model-config", cfg, "--gpu", "h100-sxm")
	if code != exitFailed || strings.Contains(out, "-") && strings.Contains(out, "GiB") || !strings.Contains(errs, `"intermediate_size"`) {
		t.Errorf("intermediate_size 1e17: exit %d\n%s%s", code, out, errs)
	}
}
