package capacity

import (
	"math"
	"testing"
)

// TestModelledReserveCalibration: the modelled reserve against the public vLLM
// startup log of Llama-3.1-8B on one H100 (util 0.92, max_num_batched_tokens 8192,
// max_num_seqs 1024; weights 14.99 GiB, available KV 55.05 GiB of 79.11 × 0.92):
// 2.74 GiB went to activations, non-torch memory and CUDA graphs. The model must
// land within 15%; a flat 1 GiB is 63% short.
func TestModelledReserveCalibration(t *testing.T) {
	cfg, err := LoadModelConfig("../samples/models/llama-3.1-8b.json")
	if err != nil {
		t.Fatal(err)
	}
	const logged = 79.11*0.92 - 14.99 - 55.05
	r := ModelledReserve(cfg, 1, 8192, 1024)
	got := float64(r.TotalBytes) / float64(gib)
	if math.Abs(got-logged)/logged > 0.15 {
		t.Errorf("modelled reserve %.2f GiB (activation %.2f, logits %.2f), want %.2f ± 15%%", got,
			float64(r.ActivationBytes)/float64(gib), float64(r.LogitsBytes)/float64(gib), logged)
	}
	if tok, seqs := VLLMBatchDefaults(nil, 80*gib); tok != 8192 || seqs != 1024 {
		t.Errorf("H100-class defaults %d/%d", tok, seqs)
	}
	a100 := GPU{Name: "a100-80gb"}
	if tok, seqs := VLLMBatchDefaults(&a100, 80*gib); tok != 2048 || seqs != 256 {
		t.Errorf("A100 defaults %d/%d, want 2048/256", tok, seqs)
	}
}
