package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// runPlanArgs runs `ceiling plan` in-process.
func runPlanArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	e := env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = runPlan(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// The example: Kimi-K2.5 on 8 RTX PRO 6000 at TP 8 with 70.8 GiB of weights per
// GPU and 2,000+1,000-token requests; then the design's story: the same box with the
// shapes side by side, the max_model_len alarm with its fixes, the roofline and the
// verdict on a sweep up to 1024. Regenerate with go test ./cmd/ceiling -run TestPlanGolden -update.
func TestPlanGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"plan-kimi-k2.5-rtx-pro-6000.golden", []string{"--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "rtx-pro-6000",
			"--gpus", "8", "--tp", "8", "--weights-gib", "70.8", "--prompt-tokens", "2000", "--output-tokens", "1000"}},
		{"plan-llama-3.1-70b-h100-fp8.golden", []string{"--model-config", "../../samples/models/llama-3.1-70b.json", "--gpu", "H100 SXM",
			"--gpus", "16", "--tp", "8", "--kv-dtype", "fp8", "--max-model-len", "32768"}},
		{"plan-kimi-k2.5-decision.golden", []string{"--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "rtx-pro-6000",
			"--gpus", "8", "--tp", "8", "--weights-gib", "70.8", "--prompt-tokens", "2000", "--output-tokens", "1000",
			"--compare-shapes", "--levels", "1,2,4,8,16,32,64,128,256,512,1024"}},
	}
	for _, tt := range tests {
		code, out, errs := runPlanArgs(tt.args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tt.golden, code, errs)
		}
		path := filepath.Join("testdata", tt.golden)
		if *update {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%s: output differs from the golden file:\n--- got\n%s\n--- want\n%s", tt.golden, out, want)
		}
	}
}

func TestPlanKimiNumbers(t *testing.T) {
	_, out, _ := runPlanArgs("--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "rtx-pro-6000",
		"--gpus", "8", "--tp", "8", "--weights-gib", "70.8", "--prompt-tokens", "2000", "--output-tokens", "1000")
	for _, want := range []string{"70,272 bytes per GPU", "15,280 tokens per GiB", "= KV cache budget", "--concurrency 1,2,4,8,16,32,48,64,96\n",
		// Weights leave 15 GiB: the modelled reserve moves the KV budget by more than
		// 10%, so the plan gives the range and its assumption.
		"range, as the reserve goes        12.07 GiB–14.23 GiB", "max_num_batched_tokens 8,192"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "1024") {
		t.Errorf("plan proposes 1024:\n%s", out)
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	noHeads := filepath.Join(dir, "config.json")
	if err := os.WriteFile(noHeads, []byte(`{"num_hidden_layers": 4, "hidden_size": 64}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"--help"}, exitOK, "Example:"},
		{"no config", []string{"--gpu", "h100-sxm"}, exitUsage, "--model-config is required"},
		{"no gpu", []string{"--model-config", "../../samples/models/llama-3.1-8b.json"}, exitUsage, "rtx-pro-6000"},
		{"unknown gpu", []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "tpu-v5"}, exitUsage, "mi325x"},
		{"bad flag", []string{"--frobnicate"}, exitUsage, "unknown flag"},
		{"missing file", []string{"--model-config", filepath.Join(dir, "nope.json"), "--gpu", "h100"}, exitFailed, "nope.json"},
		{"missing field", []string{"--model-config", noHeads, "--gpu", "h100"}, exitFailed, "num_key_value_heads"},
		{"too many weights", []string{"--model-config", "../../samples/models/llama-3.1-70b.json", "--gpu", "rtx-4090"}, exitFailed, "no memory left"},
		{"bad kv dtype", []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100", "--kv-dtype", "int2"}, exitUsage, "int2"},
		{"prefix as long as the prompt", []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100", "--prompt-tokens", "100", "--prefix-tokens", "100"}, exitUsage, "--prefix-tokens"},
		{"prefix hit rate of 1", []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100", "--prefix-hit-rate", "1"}, exitUsage, "--prefix-hit-rate"},
		{"prefix tokens and hit rate", []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100", "--prefix-tokens", "10", "--prefix-hit-rate", "0.5"}, exitUsage, "not both"},
		{"gpus not multiple of tp", []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100", "--gpus", "3", "--tp", "2"}, exitUsage, "multiple"}, // a usage error (issue 8 item 16)
	}
	for _, tt := range tests {
		code, out, errs := runPlanArgs(tt.args...)
		if code != tt.code || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%s: exit %d, want %d with %q in:\n%s%s", tt.name, code, tt.code, tt.want, out, errs)
		}
	}
}

// TestPlanSharedPrefix: with --prefix-tokens (or the same as --prefix-hit-rate)
// plan counts the shared prefix once per KV cache: the predicted KV ceiling is
// (capacity − prefix) ÷ unshared tokens, the levels' verdicts follow it, and
// without the flag the output is the unshared one.
func TestPlanSharedPrefix(t *testing.T) {
	base := []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100", "--prompt-tokens", "2100", "--output-tokens", "100"}
	_, plain, _ := runPlanArgs(base...)
	if strings.Contains(plain, "counted once") {
		t.Fatalf("plan without a shared prefix mentions one:\n%s", plain)
	}
	for _, extra := range [][]string{{"--prefix-tokens", "2000"}, {"--prefix-hit-rate", "0.9524"}} {
		code, out, errs := runPlanArgs(append(append([]string{}, base...), extra...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		m := regexp.MustCompile(`so about (\d+) instead of (\d+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%v: no shared-prefix ceiling in:\n%s", extra, out)
		}
		shared, _ := strconv.Atoi(m[1])
		whole, _ := strconv.Atoi(m[2])
		// The KV cache holds C tokens: C / 2,200 requests of 2,200 tokens whole;
		// (C − 2,000) / 200 with the 2,000-token prefix held once.
		c := regexp.MustCompile(`bytes per token\s+([\d,]+) tokens`).FindStringSubmatch(out)
		if c == nil {
			t.Fatalf("%v: no KV capacity in tokens in:\n%s", extra, out)
		}
		capTokens, _ := strconv.Atoi(strings.ReplaceAll(c[1], ",", ""))
		if wantWhole, wantShared := capTokens/2200, (capTokens-2000)/200; whole != wantWhole || shared != wantShared {
			t.Errorf("%v: about %d instead of %d; want %d instead of %d (%d tokens)", extra, shared, whole, wantShared, wantWhole, capTokens)
		}
		row := regexp.MustCompile(`(?m)^\s+2048\s+411,600\s.*$`).FindString(out)
		if row == "" || strings.Contains(row, "queueing only") != (411600 > capTokens) {
			t.Errorf("%v: the level table does not count the prefix once:\n%s", extra, out)
		}
	}
}
