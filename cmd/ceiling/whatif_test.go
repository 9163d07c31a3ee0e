package main

import (
	"encoding/json"
	"path/filepath"

	"github.com/ceiling-llm/ceiling/analyze"
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
	for _, want := range []string{"PREDICTED", "measured", "--to-kv-dtype fp8, --to-prompt-tokens 8000", "basis: ", "Every level at the same concurrency: measured beside PREDICTED (80% interval)", "intervals: "} {
		if !strings.Contains(out, want) {
			t.Errorf("whatif output lacks %q:\n%s", want, out)
		}
	}
	// The what-if is printed first and alone; the analysis only with --analysis.
	if !strings.HasPrefix(out, "What-if of run") || strings.Contains(out, "\nLevels\n") {
		t.Errorf("whatif does not print its table first and alone:\n%s", out)
	}
	if _, full, _ := runCLI("whatif", sample, "--model-config", llama, "--gpu", "h100-sxm", "--to-kv-dtype", "fp8", "--analysis"); !strings.HasPrefix(full, "What-if of run") || !strings.Contains(full, "\nLevels\n") {
		t.Errorf("whatif --analysis lacks the analysis after the what-if:\n%s", full)
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

// whatif --format json has every measured level predicted under the change with
// its interval, on the real H100 sweep; longer prompts never raise a prediction,
// and levels beyond what the changed KV cache holds are marked, not numbers.
func TestWhatIfJSONLevels(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*h100*.json"))
	if err != nil || len(files) != 9 {
		t.Fatalf("want the 9 H100 files, got %d (%v)", len(files), err)
	}
	run := filepath.Join(t.TempDir(), "h100.parquet")
	ceiling(t, append(append([]string{"import"}, files...), "-o", run)...)
	out := ceiling(t, "whatif", run, "--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm", "--gpus", "1",
		"--to-prompt-tokens", "8000", "--format", "json")
	var doc analyze.WhatIfDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Schema != analyze.WhatIfSchema || len(doc.WhatIf) != 1 || doc.Analysis != nil {
		t.Fatalf("doc %+v", doc)
	}
	res := doc.WhatIf[0]
	if !res.Predicted || res.Change != "--to-prompt-tokens 8000" || res.IntervalMethod == "" || res.Interval.Kind != "lengths" || len(res.Levels) != 9 {
		t.Fatalf("result %+v", res)
	}
	predicted := 0
	for _, l := range res.Levels {
		if l.Beyond != "" {
			if l.OutputTokS != nil {
				t.Errorf("c=%g marked %q but has a number", l.Concurrency, l.Beyond)
			}
			continue
		}
		predicted++
		o := l.OutputTokS
		if o == nil || l.PerUserTokS == nil || l.TTFT == nil || l.TPOT == nil {
			t.Fatalf("c=%g: missing figures %+v", l.Concurrency, l)
		}
		if !(o.Low <= o.Value && o.Value <= o.High) {
			t.Errorf("c=%g: interval %+v does not hold its value", l.Concurrency, o)
		}
		// 8000-token prompts against 938 measured: more prefill and KV per token (the
		// value falls; the interval, calibrated on public errors, may reach above).
		if o.Value >= l.Measured.OutputTokS || l.TTFT.Value <= *l.Measured.TTFT {
			t.Errorf("c=%g: predicted %+v tok/s, TTFT %+v against measured %g tok/s, TTFT %g: longer prompts raised a figure",
				l.Concurrency, o, l.TTFT, l.Measured.OutputTokS, *l.Measured.TTFT)
		}
	}
	if predicted != 6 {
		t.Errorf("%d levels predicted; want the 6 valid ones", predicted)
	}
}

// TestWhatIfSharedPrefix: --to-prefix-tokens counts a shared prefix once per KV
// cache on an imported run whose engine is not known (the flag taken at its word,
// and the basis says so), raising the predicted KV ceiling, and gives llama.cpp,
// whose slots keep their own copies, no such credit.
func TestWhatIfSharedPrefix(t *testing.T) {
	llama := "../../samples/models/llama-3.1-8b.json"
	out := ceiling(t, "whatif", "../../samples/llamacpp-d768-4slots.parquet", "--model-config", llama, "--gpu", "h100-sxm",
		"--to-prefix-tokens", "500")
	if !strings.Contains(out, "not counted once: llama.cpp shares no prefix across requests") {
		t.Errorf("llama.cpp what-if credits a shared prefix:\n%s", out)
	}
	files, err := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*h100*.json"))
	if err != nil || len(files) != 9 {
		t.Fatalf("want the 9 H100 files, got %d (%v)", len(files), err)
	}
	run := filepath.Join(t.TempDir(), "h100.parquet")
	ceiling(t, append(append([]string{"import"}, files...), "-o", run)...)
	kv := func(extra ...string) analyze.WhatIfRow {
		var doc analyze.WhatIfDoc
		args := append([]string{"whatif", run, "--model-config", llama, "--gpu", "h100-sxm", "--gpus", "1", "--to-prompt-tokens", "2100", "--format", "json"}, extra...)
		if err := json.Unmarshal([]byte(ceiling(t, args...)), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.WhatIf[0].Rows[1]
	}
	plain, shared := kv(), kv("--to-prefix-tokens", "2000")
	if !strings.Contains(shared.Basis, "shared prefixes counted once") || !strings.Contains(shared.Basis, "assumed to share") || shared.KVCeiling <= 2*plain.KVCeiling {
		t.Errorf("with 2,000 of 2,100 prompt tokens shared: KV ceiling %.1f (%s), without %.1f; want it counted once and far higher",
			shared.KVCeiling, shared.Basis, plain.KVCeiling)
	}
	t.Logf("KV ceiling %.1f without, %.1f with the prefix counted once", plain.KVCeiling, shared.KVCeiling)
}

// TestWhatIfKVOnlyFromDeclaredCapacity (issue 28, item 6): other request lengths
// or another max_model_len are a KV-only what-if, which works from the capacity
// the server declared (llama.cpp's n_ctx here: 1,024 tokens shared by 8 slots)
// without --model-config: the KV ceiling is the declared tokens over the new
// request length. A change that needs the model (a KV dtype) still asks for it,
// and a run whose server declared nothing says so.
func TestWhatIfKVOnlyFromDeclaredCapacity(t *testing.T) {
	declared := "../../samples/llamacpp-d64-unified-8slots.parquet"
	var doc analyze.WhatIfDoc
	if err := json.Unmarshal([]byte(ceiling(t, "whatif", declared, "--to-prompt-tokens", "400", "--format", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	res := doc.WhatIf[0]
	m, p := res.Rows[0], res.Rows[1]
	if m.KVCapacityTokens != 1024 || p.KVCapacityTokens != 1024 || !p.Predicted {
		t.Fatalf("rows %+v", res.Rows)
	}
	if want := 1024 / p.RequestTokens; p.KVCeiling != want || p.RequestTokens <= 400 || p.KVCeiling >= m.KVCeiling {
		t.Errorf("predicted KV ceiling %g at %g tokens, want 1024 ÷ tokens = %g, below the measured %g", p.KVCeiling, p.RequestTokens, want, m.KVCeiling)
	}
	if !strings.Contains(p.Basis, "server-declared capacity (1024 tokens per cache)") || p.OutputTokS != nil {
		t.Errorf("basis %q, throughput %v: want the declared figure named and no throughput", p.Basis, p.OutputTokS)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{declared, "--to-kv-dtype", "fp8"}, exitUsage, "--model-config and --gpu (the measured deployment) are required"},
		{[]string{"../../samples/llamacpp-d768-4slots.parquet", "--to-prompt-tokens", "400"}, exitFailed, "the server declared no KV capacity: a what-if needs --model-config"},
	} {
		code, _, stderr := runCLI(append([]string{"whatif"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("whatif %v: exit %d, want %d with %q: %s", tt.args, code, tt.code, tt.want, stderr)
		}
	}
}
