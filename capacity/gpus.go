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
	// Link is the kind of GPU-to-GPU link: LinkPCIe or LinkNVLink (a switched
	// GPU fabric: NVLink, Infinity Fabric). It sets the all-reduce latency the
	// roofline assumes.
	Link string
	// BF16FLOPs, FP8FLOPs and FP4FLOPs are the dense tensor-core peaks in FLOP/s
	// (0: no such tensor cores).
	BF16FLOPs, FP8FLOPs, FP4FLOPs float64
}

// Link kinds of GPU.Link.
const (
	LinkPCIe   = "pcie"
	LinkNVLink = "nvlink"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
	tb  = 1e12
	gb  = 1e9
	tf  = 1e12
)

// gpuCatalog returns the built-in catalog. Memory is the total reported by the driver
// (nvidia-smi "MiB" totals, rocm-smi VRAM totals); bandwidth, peak FLOP/s and
// interconnect are the vendors' datasheet figures, cited per entry. Peak FLOP/s are
// dense tensor-core figures (the datasheets' "with sparsity" figures halved), 0 where
// the GPU has no such tensor cores. Any entry's memory can be overridden with
// BudgetInput.MemoryGiB. A function, not a package variable, so that nothing can
// mutate it.
func gpuCatalog() []GPU {
	return []GPU{
		// NVIDIA A100 datasheet (nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/
		// nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): BF16 312 TFLOPS dense, no
		// FP8; 1,555 GB/s (40GB), 2,039 GB/s (80GB SXM); NVLink 600 GB/s.
		{Name: "a100-40", Full: "NVIDIA A100 40GB", MemoryBytes: 40960 * mib, BandwidthBytesS: 1.555 * tb,
			Interconnect: "NVLink 3 (600 GB/s)", InterconnectBytesS: 600 * gb, Link: LinkNVLink, BF16FLOPs: 312 * tf},
		{Name: "a100-80", Full: "NVIDIA A100 80GB", MemoryBytes: 81920 * mib, BandwidthBytesS: 2.039 * tb,
			Interconnect: "NVLink 3 (600 GB/s)", InterconnectBytesS: 600 * gb, Link: LinkNVLink, BF16FLOPs: 312 * tf},
		// NVIDIA H100 datasheet (resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet):
		// SXM BF16 1,979 / FP8 3,958 TFLOPS with sparsity (989 / 1,979 dense), 3.35 TB/s,
		// NVLink 900 GB/s; PCIe BF16 1,513 / FP8 3,026 sparse (756 / 1,513 dense), 2 TB/s.
		{Name: "h100-sxm", Full: "NVIDIA H100 SXM 80GB", MemoryBytes: 81559 * mib, BandwidthBytesS: 3.35 * tb,
			Interconnect: "NVLink 4 (900 GB/s)", InterconnectBytesS: 900 * gb, Link: LinkNVLink, BF16FLOPs: 989 * tf, FP8FLOPs: 1979 * tf},
		{Name: "h100-pcie", Full: "NVIDIA H100 PCIe 80GB", MemoryBytes: 81559 * mib, BandwidthBytesS: 2.0 * tb,
			Interconnect: "PCIe 5.0 x16 (128 GB/s)", InterconnectBytesS: 128 * gb, Link: LinkPCIe, BF16FLOPs: 756 * tf, FP8FLOPs: 1513 * tf},
		// NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200): H200 SXM the same
		// tensor cores as H100 SXM (989 / 1,979 dense), 4.8 TB/s, NVLink 900 GB/s.
		{Name: "h200", Full: "NVIDIA H200 141GB", MemoryBytes: 143771 * mib, BandwidthBytesS: 4.8 * tb,
			Interconnect: "NVLink 4 (900 GB/s)", InterconnectBytesS: 900 * gb, Link: LinkNVLink, BF16FLOPs: 989 * tf, FP8FLOPs: 1979 * tf},
		// NVIDIA HGX B200 datasheet (nvidia.com/en-us/data-center/hgx): per GPU FP4 18 /
		// FP8 9 / BF16 4.5 PFLOPS with sparsity (9 / 4.5 / 2.25 dense), 8 TB/s, NVLink 1.8 TB/s.
		{Name: "b200", Full: "NVIDIA B200 180GB", MemoryBytes: 183359 * mib, BandwidthBytesS: 8.0 * tb,
			Interconnect: "NVLink 5 (1.8 TB/s)", InterconnectBytesS: 1800 * gb, Link: LinkNVLink, BF16FLOPs: 2250 * tf, FP8FLOPs: 4500 * tf, FP4FLOPs: 9000 * tf},
		// NVIDIA GB200 NVL72 datasheet (nvidia.com/en-us/data-center/gb200-nvl72): per
		// Blackwell GPU FP4 20 / FP8 10 / BF16 5 PFLOPS with sparsity (10 / 5 / 2.5 dense), 8 TB/s.
		{Name: "gb200", Full: "NVIDIA GB200 (per Blackwell GPU)", MemoryBytes: 189471 * mib, BandwidthBytesS: 8.0 * tb,
			Interconnect: "NVLink 5 (1.8 TB/s)", InterconnectBytesS: 1800 * gb, Link: LinkNVLink, BF16FLOPs: 2500 * tf, FP8FLOPs: 5000 * tf, FP4FLOPs: 10000 * tf},
		// NVIDIA HGX B300 datasheet (nvidia.com/en-us/data-center/hgx): 8 GPUs, FP4 144 PFLOPS
		// with sparsity / 108 dense, FP8 72 and BF16 36 PFLOPS with sparsity: per GPU FP4
		// 13.5 / FP8 4.5 / BF16 2.25 PFLOPS dense; 2.3 TB HBM3e (288 GB per GPU) at 64 TB/s
		// (8 TB/s per GPU); NVLink 5 1.8 TB/s per GPU. Memory as the driver reports it: 268
		// GiB ("268 GB HBM3e" and "275 GB each" for NVIDIA B300 SXM6 AC in public nvidia-smi
		// based logs), not the 288 GB of the datasheet.
		{Name: "b300", Full: "NVIDIA B300 288GB (Blackwell Ultra)", MemoryBytes: 268 * gib, BandwidthBytesS: 8.0 * tb,
			Interconnect: "NVLink 5 (1.8 TB/s)", InterconnectBytesS: 1800 * gb, Link: LinkNVLink, BF16FLOPs: 2250 * tf, FP8FLOPs: 4500 * tf, FP4FLOPs: 13500 * tf},
		// NVIDIA GB300 NVL72 datasheet (nvidia.com/en-us/data-center/gb300-nvl72): 72 GPUs,
		// FP4 1,440 PFLOPS with sparsity / 1,080 dense, FP8 720 and BF16 360 PFLOPS with
		// sparsity: per GPU FP4 15 / FP8 5 / BF16 2.5 PFLOPS dense; up to 20 TB HBM3e at
		// 576 TB/s (288 GB, 8 TB/s per GPU); NVLink 5 1.8 TB/s per GPU. Memory taken as the
		// B300's driver total (the same 288 GB HBM3e stacks).
		{Name: "gb300", Full: "NVIDIA GB300 (per Blackwell Ultra GPU)", MemoryBytes: 268 * gib, BandwidthBytesS: 8.0 * tb,
			Interconnect: "NVLink 5 (1.8 TB/s)", InterconnectBytesS: 1800 * gb, Link: LinkNVLink, BF16FLOPs: 2500 * tf, FP8FLOPs: 5000 * tf, FP4FLOPs: 15000 * tf},
		// NVIDIA H20 (Hopper for the China market; NVIDIA's product brief as public spec
		// tables repeat it): 96 GB HBM3 at 4.0 TB/s, BF16 148 / FP8 296 TFLOPS dense,
		// NVLink 900 GB/s. Memory: 97,871 MiB, the total nvidia-smi reports in public logs.
		{Name: "h20", Full: "NVIDIA H20 96GB", MemoryBytes: 97871 * mib, BandwidthBytesS: 4.0 * tb,
			Interconnect: "NVLink 4 (900 GB/s)", InterconnectBytesS: 900 * gb, Link: LinkNVLink, BF16FLOPs: 148 * tf, FP8FLOPs: 296 * tf},
		// NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet (nvidia.com/en-us/data-center/
		// rtx-pro-6000-blackwell-server-edition): 4 PFLOPS FP4 with sparsity (2,000 dense;
		// FP8 1,000 and BF16 500 dense at the usual 2:1 steps), 1,792 GB/s, PCIe 5.0 x16, no NVLink.
		{Name: "rtx-pro-6000", Full: "NVIDIA RTX PRO 6000 Blackwell 96GB", MemoryBytes: 97887 * mib, BandwidthBytesS: 1.792 * tb,
			Interconnect: "PCIe 5.0 x16 (128 GB/s)", InterconnectBytesS: 128 * gb, Link: LinkPCIe, BF16FLOPs: 500 * tf, FP8FLOPs: 1000 * tf, FP4FLOPs: 2000 * tf},
		// NVIDIA L40S datasheet (nvidia.com/en-us/data-center/l40s): BF16 362.05 / FP8
		// 733 TFLOPS dense (733 / 1,466 with sparsity), 864 GB/s, PCIe 4.0 x16.
		{Name: "l40s", Full: "NVIDIA L40S 48GB", MemoryBytes: 46068 * mib, BandwidthBytesS: 0.864 * tb,
			Interconnect: "PCIe 4.0 x16 (64 GB/s)", InterconnectBytesS: 64 * gb, Link: LinkPCIe, BF16FLOPs: 362 * tf, FP8FLOPs: 733 * tf},
		// NVIDIA Ada GPU architecture whitepaper, RTX 4090: BF16 165.2 / FP8 330.3 TFLOPS
		// dense with FP32 accumulate, 1,008 GB/s, PCIe 4.0 x16.
		{Name: "rtx-4090", Full: "NVIDIA GeForce RTX 4090 24GB", MemoryBytes: 24564 * mib, BandwidthBytesS: 1.008 * tb,
			Interconnect: "PCIe 4.0 x16 (64 GB/s)", InterconnectBytesS: 64 * gb, Link: LinkPCIe, BF16FLOPs: 165.2 * tf, FP8FLOPs: 330.3 * tf},
		// NVIDIA RTX Blackwell GPU architecture whitepaper, RTX 5090: BF16 209.5 / FP8 419 /
		// FP4 838 TFLOPS dense with FP32 accumulate, 1,792 GB/s, PCIe 5.0 x16.
		{Name: "rtx-5090", Full: "NVIDIA GeForce RTX 5090 32GB", MemoryBytes: 32607 * mib, BandwidthBytesS: 1.792 * tb,
			Interconnect: "PCIe 5.0 x16 (128 GB/s)", InterconnectBytesS: 128 * gb, Link: LinkPCIe, BF16FLOPs: 209.5 * tf, FP8FLOPs: 419 * tf, FP4FLOPs: 838 * tf},
		// AMD Instinct MI300X datasheet (amd.com/content/dam/amd/en/documents/instinct-tech-docs/
		// data-sheets/amd-instinct-mi300x-data-sheet.pdf): BF16 1,307.4 / FP8 2,614.9 TFLOPS
		// dense, 5.3 TB/s, Infinity Fabric 896 GB/s aggregate.
		{Name: "mi300x", Full: "AMD Instinct MI300X 192GB", MemoryBytes: 196592 * mib, BandwidthBytesS: 5.3 * tb,
			Interconnect: "Infinity Fabric (896 GB/s)", InterconnectBytesS: 896 * gb, Link: LinkNVLink, BF16FLOPs: 1307.4 * tf, FP8FLOPs: 2614.9 * tf},
		// AMD Instinct MI325X datasheet (amd.com, instinct-tech-docs/product-briefs/
		// instinct-mi325x-datasheet.pdf): the MI300X's compute, 6 TB/s, 896 GB/s Infinity Fabric.
		{Name: "mi325x", Full: "AMD Instinct MI325X 256GB", MemoryBytes: 256 * gib, BandwidthBytesS: 6.0 * tb,
			Interconnect: "Infinity Fabric (896 GB/s)", InterconnectBytesS: 896 * gb, Link: LinkNVLink, BF16FLOPs: 1307.4 * tf, FP8FLOPs: 2614.9 * tf},
		// AMD Instinct MI355X datasheet (amd.com, instinct-tech-docs/product-briefs/
		// amd-instinct-mi355x-gpu-brochure.pdf): BF16 2,516.6 / FP8 5,033.2 / MXFP4 10,066.3
		// TFLOPS dense, 288 GB HBM3E at 8 TB/s, Infinity Fabric 7 links × 153.6 GB/s
		// (1,075 GB/s). Memory: 288 GiB, the VRAM of ROCm's GPU specifications table
		// (rocm.docs.amd.com, reference/gpu-specs). MXFP4 runs on the FP4 tensor cores.
		{Name: "mi355x", Full: "AMD Instinct MI355X 288GB", MemoryBytes: 288 * gib, BandwidthBytesS: 8.0 * tb,
			Interconnect: "Infinity Fabric (1,075 GB/s)", InterconnectBytesS: 1075 * gb, Link: LinkNVLink, BF16FLOPs: 2516.6 * tf, FP8FLOPs: 5033.2 * tf, FP4FLOPs: 10066.3 * tf},
	}
}

// Vendor is "amd" or "nvidia", from the marketing name: the efficiency the what-if
// carries between GPUs differs by vendor (prediction's calibration).
func (g GPU) Vendor() string {
	if strings.HasPrefix(g.Full, "AMD") {
		return "amd"
	}
	return "nvidia"
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
			// nvidia-smi's names: "NVIDIA B300 SXM6 AC", "NVIDIA GB300"
			"b300sxm6ac": "b300",
			"b300sxm6":   "b300",
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
