package capacity

import (
	"fmt"
	"sort"
	"strings"
)

// GPU is one entry of the built-in hardware catalog.
type GPU struct {
	Name string // catalog name, e.g. "h100-sxm"
	Full string // marketing name
	// MemoryBytes is the device memory as the serving engine sees it (the total that
	// nvidia-smi / torch.cuda.mem_get_info or rocm-smi report), not the marketing
	// figure: the utilization cap of vLLM and SGLang applies to this number.
	MemoryBytes int64
	// BandwidthBytesS is the peak memory bandwidth in bytes per second.
	BandwidthBytesS float64
	// Interconnect names the GPU-to-GPU link and its bandwidth per GPU.
	Interconnect string
	// InterconnectBytesS is that bandwidth in bytes per second (bidirectional).
	InterconnectBytesS float64
}

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
	tb  = 1e12
	gb  = 1e9
)

// gpuCatalog returns the built-in catalog. Memory is the total reported by the driver
// (nvidia-smi "MiB" totals, rocm-smi VRAM totals); bandwidth and interconnect are the
// vendors' datasheet figures. Any entry's memory can be overridden with BudgetInput.MemoryGiB.
// A function, not a package variable, so that nothing can mutate it.
func gpuCatalog() []GPU {
	return []GPU{
		{"a100-40", "NVIDIA A100 40GB", 40960 * mib, 1.555 * tb, "NVLink 3 (600 GB/s)", 600 * gb},
		{"a100-80", "NVIDIA A100 80GB", 81920 * mib, 2.039 * tb, "NVLink 3 (600 GB/s)", 600 * gb},
		{"h100-sxm", "NVIDIA H100 SXM 80GB", 81559 * mib, 3.35 * tb, "NVLink 4 (900 GB/s)", 900 * gb},
		{"h100-pcie", "NVIDIA H100 PCIe 80GB", 81559 * mib, 2.0 * tb, "PCIe 5.0 x16 (128 GB/s)", 128 * gb},
		{"h200", "NVIDIA H200 141GB", 143771 * mib, 4.8 * tb, "NVLink 4 (900 GB/s)", 900 * gb},
		{"b200", "NVIDIA B200 180GB", 183359 * mib, 8.0 * tb, "NVLink 5 (1.8 TB/s)", 1800 * gb},
		{"gb200", "NVIDIA GB200 (per Blackwell GPU)", 189471 * mib, 8.0 * tb, "NVLink 5 (1.8 TB/s)", 1800 * gb},
		{"rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell 96GB", 97887 * mib, 1.792 * tb, "PCIe 5.0 x16 (128 GB/s)", 128 * gb},
		{"l40s", "NVIDIA L40S 48GB", 46068 * mib, 0.864 * tb, "PCIe 4.0 x16 (64 GB/s)", 64 * gb},
		{"rtx-4090", "NVIDIA GeForce RTX 4090 24GB", 24564 * mib, 1.008 * tb, "PCIe 4.0 x16 (64 GB/s)", 64 * gb},
		{"rtx-5090", "NVIDIA GeForce RTX 5090 32GB", 32607 * mib, 1.792 * tb, "PCIe 5.0 x16 (128 GB/s)", 128 * gb},
		{"mi300x", "AMD Instinct MI300X 192GB", 196592 * mib, 5.3 * tb, "Infinity Fabric (896 GB/s)", 896 * gb},
		{"mi325x", "AMD Instinct MI325X 256GB", 256 * gib, 6.0 * tb, "Infinity Fabric (896 GB/s)", 896 * gb},
	}
}

// GPUNames lists the catalog names in catalog order.
func GPUNames() []string {
	var names []string
	for _, g := range gpuCatalog() {
		names = append(names, g.Name)
	}
	return names
}

// normalizeGPUName folds case, spaces, underscores and vendor words so that
// "H100 SXM", "nvidia_h100-sxm" and "h100sxm" all find "h100-sxm".
func normalizeGPUName(s string) string {
	s = strings.ToLower(s)
	for _, w := range []string{"nvidia", "amd", "geforce", "instinct", "blackwell"} {
		s = strings.ReplaceAll(s, w, "")
	}
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	out := b.String()
	// Common spellings of the memory suffix: "a100-80gb", "a100 40 GB".
	out = strings.TrimSuffix(out, "gb")
	return out
}

// LookupGPU finds a GPU in the catalog, tolerant of case, spaces and punctuation.
// An unknown name gets an error that lists the catalog.
func LookupGPU(name string) (GPU, error) {
	want := normalizeGPUName(name)
	if want != "" {
		aliases := map[string]string{
			"h100":     "h100-sxm",
			"h100sxm5": "h100-sxm",
			"a100":     "a100-80",
			"pro6000":  "rtx-pro-6000",
			"4090":     "rtx-4090",
			"5090":     "rtx-5090",
		}
		if full, ok := aliases[want]; ok {
			want = normalizeGPUName(full)
		}
		for _, g := range gpuCatalog() {
			if normalizeGPUName(g.Name) == want {
				return g, nil
			}
		}
	}
	names := GPUNames()
	sort.Strings(names)
	return GPU{}, fmt.Errorf("unknown GPU %q; the catalog has: %s (or set BudgetInput.MemoryGiB)", name, strings.Join(names, ", "))
}
