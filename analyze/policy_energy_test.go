package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/prom"
)

// Exporter pages in the shapes real exporters serve: DCGM exporter 3.x as NVIDIA's
// documentation prints it (A100 node "ub20-a100-k8s", UUID/device/Hostname labels),
// the older dcgm-exporter format with a space after each comma in the labels, and
// AMD's device-metrics exporter (gpu_id/serial_number/hostname labels, energy in
// µJ). The values are the test's: power constant per GPU, energy counters given.
const dcgmPage = `# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",device="nvidia0",Hostname="ub20-a100-k8s"} 1215
DCGM_FI_DEV_SM_CLOCK{gpu="1",UUID="GPU-7f1b2c3d-0000-1111-2222-333344445555",device="nvidia1",Hostname="ub20-a100-k8s"} 1410
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",device="nvidia0",Hostname="ub20-a100-k8s"} POWER0
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-7f1b2c3d-0000-1111-2222-333344445555",device="nvidia1",Hostname="ub20-a100-k8s"} 200.000000
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",device="nvidia0",Hostname="ub20-a100-k8s"} ENERGY0
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="1",UUID="GPU-7f1b2c3d-0000-1111-2222-333344445555",device="nvidia1",Hostname="ub20-a100-k8s"} ENERGY1
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",device="nvidia0",Hostname="ub20-a100-k8s"} 90
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-7f1b2c3d-0000-1111-2222-333344445555",device="nvidia1",Hostname="ub20-a100-k8s"} 70
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",device="nvidia0",Hostname="ub20-a100-k8s"} 4845
DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-7f1b2c3d-0000-1111-2222-333344445555",device="nvidia1",Hostname="ub20-a100-k8s"} 5155
`

const dcgmOldPage = `DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba", device="nvidia0"} 885
DCGM_FI_DEV_POWER_USAGE{gpu="0", UUID="GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba", device="nvidia0"} 100.000000
DCGM_FI_DEV_GPU_UTIL{gpu="0", UUID="GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba", device="nvidia0"} 0
`

const amdPage = `# HELP gpu_power_usage GPU power usage in Watts
# TYPE gpu_power_usage gauge
gpu_power_usage{card_model="0x74a1",gpu_id="0",hostname="mi300-node",serial_number="692251001124"} 150
# HELP gpu_gfx_activity graphics engine usage percentage
# TYPE gpu_gfx_activity gauge
gpu_gfx_activity{card_model="0x74a1",gpu_id="0",hostname="mi300-node",serial_number="692251001124"} 50
`

// tritonPage is Triton's own /metrics GPU section (port 8002) as Triton serves it:
// "#HELP"/"#TYPE" lines, gpu_uuid labels, six decimals, energy in joules since
// Triton started, utilization a fraction.
const tritonPage = `# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-0e9fdafb-5adb-91cd-26a8-308d34357efc"} UTIL0
nv_gpu_utilization{gpu_uuid="GPU-a07dfe08-b87f-1f96-7083-07a26d0fa83e"} 0.250000
# HELP nv_gpu_memory_used_bytes GPU used memory, in bytes
# TYPE nv_gpu_memory_used_bytes gauge
nv_gpu_memory_used_bytes{gpu_uuid="GPU-0e9fdafb-5adb-91cd-26a8-308d34357efc"} 21474836480.000000
nv_gpu_memory_used_bytes{gpu_uuid="GPU-a07dfe08-b87f-1f96-7083-07a26d0fa83e"} 10737418240.000000
# HELP nv_gpu_power_usage GPU power usage in watts
# TYPE nv_gpu_power_usage gauge
nv_gpu_power_usage{gpu_uuid="GPU-0e9fdafb-5adb-91cd-26a8-308d34357efc"} POWER0
nv_gpu_power_usage{gpu_uuid="GPU-a07dfe08-b87f-1f96-7083-07a26d0fa83e"} 55.137000
# HELP nv_gpu_power_limit GPU power management limit in watts
# TYPE nv_gpu_power_limit gauge
nv_gpu_power_limit{gpu_uuid="GPU-0e9fdafb-5adb-91cd-26a8-308d34357efc"} 300.000000
nv_gpu_power_limit{gpu_uuid="GPU-a07dfe08-b87f-1f96-7083-07a26d0fa83e"} 300.000000
# HELP nv_energy_consumption GPU energy consumption in joules since the Triton Server started
# TYPE nv_energy_consumption counter
nv_energy_consumption{gpu_uuid="GPU-0e9fdafb-5adb-91cd-26a8-308d34357efc"} ENERGY0
nv_energy_consumption{gpu_uuid="GPU-a07dfe08-b87f-1f96-7083-07a26d0fa83e"} ENERGY1
`

// TestLevelGPUTriton: Triton's own GPU metrics give the same figures as the
// exporters: power in W, energy from its joule counter, utilization scaled from a
// fraction to percent, memory from bytes to MiB, GPUs told apart by gpu_uuid.
func TestLevelGPUTriton(t *testing.T) {
	const s = int64(1e9)
	var samples []gpuSample
	power0 := []string{"250.000000", "350.000000", "300.000000"}
	energy0 := []string{"9380.053000", "9680.053000", "9980.053000"} // +300 J each second
	energy1 := []string{"1000.000000", "1055.137000", "1110.274000"} // +55.137 J each second
	util0 := []string{"0.800000", "0.900000", "1.000000"}
	for i := range 3 {
		samples = append(samples, page(t, tritonPage, "triton:8002", int64(i)*s,
			"POWER0", power0[i], "ENERGY0", energy0[i], "ENERGY1", energy1[i], "UTIL0", util0[i])...)
	}
	const windowS, outTokS, reqS = 2.0, 500.0, 4.0
	g := levelGPU(samples, 0, 2*s, windowS, outTokS, reqS)
	if g == nil {
		t.Fatal("no GPU figures from Triton's metrics")
	}
	wantEnergy := 300.0*windowS + 55.137*windowS // the counters' rates over the window
	for _, c := range []struct {
		name      string
		got       *float64
		want, tol float64
	}{
		{"total W", g.TotalPowerW, 300 + 55.137, 1e-6},
		{"energy J", g.EnergyJ, wantEnergy, 1e-6},
		{"J/token", g.JPerOutputToken, wantEnergy / windowS / outTokS, 1e-9},
		{"util %", g.UtilPct, (90 + 25) / 2.0, 1e-9},
		{"memory MiB", g.MemUsedMiB, 20480 + 10240, 1e-9},
	} {
		if c.got == nil || math.Abs(*c.got-c.want) > c.tol {
			t.Errorf("%s = %v, want %g", c.name, optValue(c.got), c.want)
		}
	}
	if g.GPUs != 2 || g.CounterResets != 0 || !strings.Contains(g.EnergySource, "counter") {
		t.Errorf("GPUs %d, resets %d, source %q: want 2 GPUs from their energy counters", g.GPUs, g.CounterResets, g.EnergySource)
	}
}

// page parses one exporter page at ts, labelled with its source as record does.
func page(t *testing.T, text, source string, ts int64, repl ...string) []gpuSample {
	t.Helper()
	text = strings.NewReplacer(repl...).Replace(text)
	samples, err := prom.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var out []gpuSample
	for _, s := range samples {
		if isGPUMetric(s.Name) {
			out = append(out, gpuSample{ts: ts, name: s.Name, labels: s.Labels + `,ceiling_gpu_source="` + source + `"`, value: s.Value})
		}
	}
	return out
}

func TestLevelGPU(t *testing.T) {
	const s = int64(1e9)
	// Node A: GPU0 at 300 W then 500 W (mean 400), its counter rising 400 J/s in
	// mJ; GPU1 at 200 W, its counter reset to near zero between the second and
	// third scrape (a driver reload). Node B: the old DCGM format, 100 W, no
	// counter. Node C: AMD, 150 W, no counter.
	var samples []gpuSample
	energy0 := []string{"1000000", "1400000", "1800000"} // mJ: +400 J each second
	energy1 := []string{"5000000", "5200000", "200000"}  // +200 J, then a reset: 200 J since the restart
	power0 := []string{"300", "500", "400"}
	for i := range 3 {
		ts := int64(i) * s
		samples = append(samples, page(t, dcgmPage, "nodea:9400", ts, "POWER0", power0[i], "ENERGY0", energy0[i], "ENERGY1", energy1[i])...)
		samples = append(samples, page(t, dcgmOldPage, "nodeb:9400", ts)...)
		samples = append(samples, page(t, amdPage, "nodec:5000", ts)...)
	}
	// A scrape outside the window is not counted.
	samples = append(samples, page(t, dcgmPage, "nodea:9400", 10*s, "POWER0", "9999", "ENERGY0", "9e12", "ENERGY1", "9e12")...)

	const windowS, outTokS, reqS = 4.0, 1000.0, 2.0 // the window is twice the scrapes' span
	g := levelGPU(samples, 0, 2*s, windowS, outTokS, reqS)
	if g == nil {
		t.Fatal("no GPU figures")
	}
	// By hand: GPUs 0 (mean 400 W), 1 (200 W), B (100 W), C (150 W).
	wantTotal := 400.0 + 200 + 100 + 150
	// Energy: GPU0 counter 800 J over 2 s → 400 W × 4 s = 1600 J; GPU1 counter 200 J
	// + 200 J (restart) over 2 s → 200 W × 4 s = 800 J; B and C mean power × 4 s.
	wantEnergy := 1600.0 + 800 + 100*4 + 150*4
	checks := []struct {
		name      string
		got       *float64
		want      float64
		tolerance float64
	}{
		{"total W", g.TotalPowerW, wantTotal, 1e-9},
		{"W/GPU", g.PowerPerGPUW, wantTotal / 4, 1e-9},
		{"energy J", g.EnergyJ, wantEnergy, 1e-6},
		{"J/token", g.JPerOutputToken, wantEnergy / windowS / outTokS, 1e-12},
		{"J/request", g.JPerRequest, wantEnergy / windowS / reqS, 1e-9},
		{"util %", g.UtilPct, (90 + 70 + 0 + 50) / 4.0, 1e-9},
		{"FB MiB", g.MemUsedMiB, 4845 + 5155, 1e-9},
		{"SM MHz", g.SMClockMHz, (1215 + 1410 + 885) / 3.0, 1e-9},
	}
	for _, c := range checks {
		if c.got == nil || math.Abs(*c.got-c.want) > c.tolerance {
			t.Errorf("%s = %v, want %g", c.name, optValue(c.got), c.want)
		}
	}
	if g.GPUs != 4 || g.CounterResets != 1 || !strings.Contains(g.EnergySource, "2 of 4") {
		t.Errorf("GPUs %d, resets %d, source %q: want 4 GPUs, 1 reset, counters on 2 of 4", g.GPUs, g.CounterResets, g.EnergySource)
	}
	if levelGPU(samples, 3*s, 4*s, 1, 1, 1) != nil {
		t.Error("figures for a window without scrapes")
	}
	// No power series at all (only clocks): nothing to say.
	if levelGPU(page(t, "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1000\n", "x:1", 0), 0, s, 1, 1, 1) != nil {
		t.Error("figures without power or energy")
	}
}

func TestLevelEnergyCost(t *testing.T) {
	g := &GPUTelemetry{PowerPerGPUW: ptr(500.0), JPerOutputToken: ptr(0.5), rateW: 1000}
	gpuCost := 2.0 // USD per million output tokens from the GPU-hour price
	e := levelEnergy(g, 2000, &gpuCost, DecisionOptions{PowerCostKWh: 0.12, PUE: 1.3})
	// 1000 W / 2000 tok/s = 0.5 J/token; 1e6 tokens = 5e5 J = 0.13889 kWh; × 1.3 × 0.12 USD.
	want := 0.5 * 1e6 / 3.6e6 * 1.3 * 0.12
	if e.EnergyCostPerMOutput == nil || math.Abs(*e.EnergyCostPerMOutput-want) > 1e-12 {
		t.Fatalf("energy cost %v, want %g", e.EnergyCostPerMOutput, want)
	}
	if e.EnergyShare == nil || math.Abs(*e.EnergyShare-want/(want+gpuCost)) > 1e-12 {
		t.Errorf("share %v, want %g", e.EnergyShare, want/(want+gpuCost))
	}
	if e := levelEnergy(g, 2000, nil, DecisionOptions{}); e.EnergyCostPerMOutput != nil || e.PUE != 1 {
		t.Errorf("without a power cost: %+v", e)
	}
}

func optValue(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A run that asked for GPU telemetry but has none says so.
func TestAttachGPUNoSamples(t *testing.T) {
	r := &Run{Server: []byte(`{"kind": "vllm", "gpu_metrics_urls": ["http://a:9400/metrics"]}`)}
	attachGPU(r, nil)
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "1 exporters were given") {
		t.Errorf("warnings %q", r.Warnings)
	}
	plain := &Run{Server: []byte(`{"kind": "vllm"}`)}
	if attachGPU(plain, nil); len(plain.Warnings) != 0 {
		t.Errorf("a run without GPU telemetry warns %q", plain.Warnings)
	}
}
