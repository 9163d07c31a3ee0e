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
