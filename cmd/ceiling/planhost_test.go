package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestPlanHostTier: `plan --host-kv-gib` shows the KV ceiling without and with a
// host tier, labelled a prediction, with the tier's tokens worked out from the
// model's KV bytes per token (Llama 3.1 70B: 80 layers × 8 KV heads × 128 × K and V
// × 2 bytes = 327,680 bytes a token over the engine's GPUs); with data-parallel
// attention each rank's share holds its own requests; a bad size is refused
// naming the flag; without it nothing changes.
func TestPlanHostTier(t *testing.T) {
	const bytesPerToken = 80 * 8 * 128 * 2 * 2
	base := []string{"--model-config", "../../samples/models/llama-3.1-70b.json", "--gpu", "H100 SXM", "--gpus", "8",
		"--prompt-tokens", "2000", "--output-tokens", "1000"}
	cases := []struct {
		name       string
		args       []string
		hostTokens float64 // per serving engine
		engines    float64
	}{
		{"one engine, TP 8", []string{"--tp", "8", "--host-kv-gib", "512"}, 512.0 * (1 << 30) / bytesPerToken, 1},
		{"two replicas of TP 4", []string{"--tp", "4", "--host-kv-gib", "100"}, 100.0 * (1 << 30) / bytesPerToken, 2},
		{"DP 2 × TP 4: each rank holds its own requests", []string{"--tp", "4", "--dp", "2", "--host-kv-gib", "100"}, 100.0 * (1 << 30) / bytesPerToken, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runPlanArgs(append(base, c.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			_, without, _ := runPlanArgs(append(base, c.args[:len(c.args)-2]...)...)
			if strings.Contains(without, "Host KV tier") || !strings.HasPrefix(out, without[:strings.Index(without, "\nThe proposed sweep")]) {
				t.Errorf("the plan without --host-kv-gib changed or shows a host tier:\n%s", without)
			}
			wantTokens := commas(int64(math.Round(c.hostTokens)))
			wantMore := math.Floor(c.engines * c.hostTokens / 3000)
			for _, want := range []string{
				"Host KV tier (a prediction: --host-kv-gib",
				"host tier holds, per serving engine", wantTokens + " tokens",
				fmt.Sprintf("the host tier keeps the KV of about %.0f more", wantMore),
				"the GPUs' KV binds the batch",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out[strings.Index(out, "Concurrency the KV"):])
				}
			}
		})
	}
	for _, bad := range []string{"-1", "NaN", "1e9"} {
		code, _, errs := runPlanArgs(append(base, "--tp", "8", "--host-kv-gib", bad)...)
		if code != exitUsage || !strings.Contains(errs, "--host-kv-gib must be from 0 to") {
			t.Errorf("--host-kv-gib %s: exit %d, %q; want a usage error naming the flag", bad, code, errs)
		}
	}
}
