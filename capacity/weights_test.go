package capacity

import (
	"testing"
)

func TestParamCountAndWeights(t *testing.T) {
	tests := []struct {
		file       string
		lo, hi     float64 // billions, the published sizes
		weightsGiB [2]float64
	}{
		{"llama-3.1-8b.json", 7.9, 8.1, [2]float64{14.5, 15.5}},
		{"llama-3.1-70b.json", 70.0, 71.0, [2]float64{130, 132}},
		{"qwen3-32b.json", 32.5, 33.0, [2]float64{60.5, 61.5}},
		{"deepseek-v3.json", 670, 673, [2]float64{620, 630}}, // fp8 checkpoint, MTP layer left out
		{"kimi-k2.5.json", 1020, 1035, [2]float64{540, 580}}, // int4 experts
		{"gpt-oss-120b.json", 116, 118, [2]float64{60, 66}},  // mxfp4 experts
	}
	for _, tt := range tests {
		c := loadSample(t, tt.file)
		total, _, err := ParamCount(c)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if b := float64(total) / 1e9; b < tt.lo || b > tt.hi {
			t.Errorf("%s: %.2fB parameters, want %.1f-%.1fB", tt.file, b, tt.lo, tt.hi)
		}
		w, _, err := WeightBytes(c, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if g := float64(w) / float64(gib); g < tt.weightsGiB[0] || g > tt.weightsGiB[1] {
			t.Errorf("%s: weights %.1f GiB, want %.1f-%.1f", tt.file, g, tt.weightsGiB[0], tt.weightsGiB[1])
		}
	}
	c := loadSample(t, "llama-3.1-8b.json")
	w, _, err := WeightBytes(c, "fp8", 8)
	if err != nil || w != 8e9 {
		t.Errorf("8B fp8 = %d, %v", w, err)
	}
}
