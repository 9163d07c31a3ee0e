package capacity

import (
	"strings"
	"testing"
)

func TestLookupGPU(t *testing.T) {
	for in, want := range map[string]string{
		"h100-sxm": "h100-sxm", "H100 SXM": "h100-sxm", "NVIDIA H100": "h100-sxm",
		"rtx-pro-6000": "rtx-pro-6000", "RTX PRO 6000 Blackwell": "rtx-pro-6000",
		"A100 80GB": "a100-80", "a100_40": "a100-40", "MI300X": "mi300x", "gb200": "gb200",
		"RTX 5090": "rtx-5090", "L40S": "l40s", "h200": "h200", "B200": "b200",
		"MI355X": "mi355x", "AMD Instinct MI355X": "mi355x", "B300": "b300", "NVIDIA B300 SXM6 AC": "b300",
		"GB300": "gb300", "H20": "h20", "NVIDIA H20": "h20",
	} {
		g, err := LookupGPU(in)
		if err != nil || g.Name != want {
			t.Errorf("LookupGPU(%q) = %q, %v; want %q", in, g.Name, err, want)
		}
	}
	_, err := LookupGPU("tpu-v5")
	if err == nil || !strings.Contains(err.Error(), "h100-sxm") || !strings.Contains(err.Error(), "mi325x") {
		t.Errorf("unknown GPU error should list the catalog: %v", err)
	}
	for _, g := range gpuCatalog() {
		if g.MemoryBytes <= 0 || g.BandwidthBytesS <= 0 || g.InterconnectBytesS <= 0 {
			t.Errorf("%s: incomplete entry", g.Name)
		}
	}
}

// The catalog entries added for the GPUs of the public measurements (issue 28) carry
// their datasheets' figures: a changed or mistyped figure fails here, and every entry
// keeps the dense peaks in the order the tensor cores have them (FP4 ≥ FP8 ≥ BF16).
func TestGPUCatalogFigures(t *testing.T) {
	for _, c := range []struct {
		name                   string
		memGiB, bwTBs          float64
		bf16, fp8, fp4, linkGB float64
	}{
		{"mi355x", 288, 8.0, 2516.6, 5033.2, 10066.3, 1075},
		{"b300", 268, 8.0, 2250, 4500, 13500, 1800},
		{"gb300", 268, 8.0, 2500, 5000, 15000, 1800},
		{"h20", 97871.0 / 1024, 4.0, 148, 296, 0, 900},
	} {
		g, err := LookupGPU(c.name)
		if err != nil {
			t.Fatal(err)
		}
		got := []float64{float64(g.MemoryBytes) / float64(gib), g.BandwidthBytesS / tb, g.BF16FLOPs / tf, g.FP8FLOPs / tf, g.FP4FLOPs / tf, g.InterconnectBytesS / gb}
		want := []float64{c.memGiB, c.bwTBs, c.bf16, c.fp8, c.fp4, c.linkGB}
		for i := range got {
			if d := got[i] - want[i]; d > 1e-6 || d < -1e-6 {
				t.Errorf("%s figure %d = %g, want %g", c.name, i, got[i], want[i])
			}
		}
	}
	for _, g := range gpuCatalog() {
		if g.BF16FLOPs <= 0 || (g.FP8FLOPs > 0 && g.FP8FLOPs < g.BF16FLOPs) || (g.FP4FLOPs > 0 && g.FP4FLOPs < g.FP8FLOPs) {
			t.Errorf("%s: dense peaks out of order: BF16 %g, FP8 %g, FP4 %g", g.Name, g.BF16FLOPs, g.FP8FLOPs, g.FP4FLOPs)
		}
	}
}
