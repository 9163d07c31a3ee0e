package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
)

func fp(v float64) *float64 { return &v }
func ip(v int64) *int64     { return &v }

func summaryP99(p99 float64) Summary { return Summary{N: 100, P99: &p99} }

// level builds a closed-loop level.
func level(c int, tokS, decode, waiting, ttftP99 float64) Level {
	return Level{Concurrency: c, OutputTokS: tokS, DecodeConcurrency: decode, WaitingConcurrency: waiting,
		TTFT: summaryP99(ttftP99), TPOT: summaryP99(0.02), E2E: summaryP99(5), Valid: true}
}

func TestRealisticTieBreaking(t *testing.T) {
	ev := map[string][]string{"kv": {"kv words"}, "batch": {"batch words"}, "slo": {"slo words"}, "knee": {"knee words"}}
	tests := []struct {
		name    string
		c       Ceilings
		binding string
		value   float64
	}{
		{"lowest wins", Ceilings{KV: fp(64), Batch: fp(32), Knee: fp(48), SLO: fp(40)}, "batch", 32},
		{"kv beats batch within 5%, with its own value", Ceilings{KV: fp(4.1), Batch: fp(4)}, "kv", 4.1},
		{"batch beats slo and knee on a tie", Ceilings{KV: fp(10), Batch: fp(16), SLO: fp(16), Knee: fp(16)}, "kv", 10},
		{"batch, slo, knee tie", Ceilings{Batch: fp(16), SLO: fp(16), Knee: fp(16)}, "batch", 16},
		{"slo beats knee", Ceilings{SLO: fp(15.5), Knee: fp(16)}, "slo", 15.5},
		{"knee alone", Ceilings{Knee: fp(8)}, "knee", 8},
		{"beyond tolerance the lower wins", Ceilings{KV: fp(20), Knee: fp(16)}, "knee", 16},
		{"slo of zero", Ceilings{SLO: fp(0), Knee: fp(16)}, "slo", 0},
	}
	for _, tt := range tests {
		got := realistic(tt.c, ev)
		if got.Binding != tt.binding || got.Concurrency == nil || *got.Concurrency != tt.value {
			t.Errorf("%s: %s %v, want %s %v", tt.name, got.Binding, got.Concurrency, tt.binding, tt.value)
			continue
		}
		if len(got.Evidence) == 0 || got.Evidence[0] != tt.binding+" words" {
			t.Errorf("%s: evidence %q", tt.name, got.Evidence)
		}
	}
	got := realistic(Ceilings{}, ev)
	if got.Concurrency != nil || got.Binding != "none" {
		t.Errorf("no ceilings: %+v", got)
	}
	got = realistic(Ceilings{KV: fp(4.1), Batch: fp(4)}, ev)
	if len(got.Evidence) != 2 || !strings.Contains(got.Evidence[1], "batch") {
		t.Errorf("tied limit not named: %q", got.Evidence)
	}
}

// llamaLevels look like llama.cpp with 4 slots: decode concurrency stops at 4.
func llamaLevels() []Level {
	return []Level{
		level(1, 50, 0.98, 0.01, 0.05),
		level(2, 98, 1.96, 0.02, 0.06),
		level(4, 180, 3.9, 0.05, 0.08),
		level(8, 184, 3.95, 3.9, 2.5),
		level(16, 185, 3.96, 11.8, 6.0),
	}
}

func TestBatchCeiling(t *testing.T) {
	v, ev, ok := batchCeiling(llamaLevels())
	if !ok || v != 4 || !strings.Contains(ev, "from offered 4 to 16") {
		t.Errorf("batch %v %v %q", v, ok, ev)
	}
	// The sample's shape (llama.cpp on CPU, 4 slots): prefill holds about a quarter of
	// each slot's time, so decode concurrency plateaus at 3.06, but nothing queues at
	// offered 4: the ceiling is 4.
	sample := []Level{level(1, 43, 0.88, 0.12, 0.34), level(2, 51, 1.73, 0.27, 0.69), level(4, 91, 3.06, 0.94, 1.29),
		level(8, 88, 3.06, 4.94, 7.1), level(16, 90, 3.08, 12.9, 18.3)}
	if v, ev, ok := batchCeiling(sample); !ok || v != 4 || !strings.Contains(ev, "batches the 4 it is offered") {
		t.Errorf("sample: batch %v %v %q", v, ok, ev)
	}
	// Levels coarser than the limit: a batch of 6 swept at 4 and 8. A queue forms at 8
	// already (decode share falls from 1 to 0.75), so the plateau's 6 is the ceiling.
	coarse := []Level{level(1, 10, 1, 0, 0.1), level(2, 20, 2, 0, 0.1), level(4, 40, 4, 0, 0.1),
		level(8, 60, 6, 2, 0.5), level(16, 60, 6, 10, 2)}
	if v, ev, ok := batchCeiling(coarse); !ok || v != 6 || !strings.Contains(ev, "batches at most 6") {
		t.Errorf("coarse: batch %v %v %q", v, ok, ev)
	}
	// Decode concurrency that follows the offered one: no batch ceiling.
	var ls []Level
	for _, c := range []int{1, 2, 4, 8, 16} {
		ls = append(ls, level(c, float64(c)*10, float64(c)*0.97, 0.1, 0.1))
	}
	if _, _, ok := batchCeiling(ls); ok {
		t.Error("scaling server: found a batch ceiling")
	}
	// A flat decode concurrency with no more offered than served is not a limit.
	if _, _, ok := batchCeiling([]Level{level(4, 1, 3.9, 0, 0), level(4, 1, 3.9, 0, 0)}); ok {
		t.Error("repeated level: found a batch ceiling")
	}
}

func TestSLOCeiling(t *testing.T) {
	ls := []Level{level(1, 10, 1, 0, 0.5), level(2, 20, 2, 0, 0.8), level(4, 40, 4, 0, 1.5), level(8, 60, 8, 0, 3.0), level(16, 60, 8, 8, 1.0)}
	v, ev, found, below := sloCeiling(ls, SLO{TTFT: fp(2)})
	// r = 0.75 at 4 and 1.5 at 8: 4 + 0.25/0.75 × 4 = 5.333, floored to the 5 requests
	// a user can configure, with the interpolated value as evidence; the lucky level 16
	// does not lift it.
	if !found || below || v != 5 || !strings.Contains(ev, "TTFT p99 3.00 s misses the 2.00 s SLO at concurrency 8") ||
		!strings.Contains(ev, "interpolated at 5.33") {
		t.Errorf("slo %v %v %v %q", v, found, below, ev)
	}
	// The worst of several SLOs decides: TPOT p99 20 ms against 10 ms fails everywhere.
	v, ev, found, below = sloCeiling(ls, SLO{TTFT: fp(2), TPOT: fp(0.01)})
	if !found || !below || v != 0 || !strings.Contains(ev, "TPOT") {
		t.Errorf("below: %v %v %v %q", v, found, below, ev)
	}
	// All met: not found, evidence says so.
	_, ev, found, _ = sloCeiling(ls, SLO{TTFT: fp(10)})
	if found || !strings.Contains(ev, "every tested level up to concurrency 16") {
		t.Errorf("all met: %v %q", found, ev)
	}
	// No SLOs: nothing.
	if _, ev, found, _ := sloCeiling(ls, SLO{}); found || ev != "" {
		t.Error("no SLOs: found a ceiling")
	}
	// A level with no successful request misses the SLO; the ceiling is the level below.
	ls[3].TTFT = Summary{}
	v, _, found, _ = sloCeiling(ls, SLO{TTFT: fp(2)})
	if !found || v != 4 {
		t.Errorf("no successes at 8: %v %v", v, found)
	}
}

func TestKneeCeiling(t *testing.T) {
	ls := []Level{level(1, 100, 1, 0, 0), level(2, 200, 2, 0, 0), level(4, 390, 4, 0, 0), level(8, 750, 8, 0, 0),
		level(16, 1300, 16, 0, 0), level(32, 1380, 32, 0, 0), level(64, 1400, 64, 0, 0)}
	v, ev, ok, _ := kneeCeiling(ls, defaultPlateauGain)
	if !ok || v != 16 || len(ev) != 2 || !strings.Contains(ev[1], "Kneedle") {
		t.Errorf("knee %v %v %q", v, ok, ev)
	}
	// Open-loop levels are placed by their measured concurrency.
	open := []Level{{Rate: 1, OutputTokS: 100, DecodeConcurrency: 1}, {Rate: 2, OutputTokS: 200, DecodeConcurrency: 2},
		{Rate: 4, OutputTokS: 205, DecodeConcurrency: 4, WaitingConcurrency: 4}}
	v, _, ok, _ = kneeCeiling(open, defaultPlateauGain)
	if !ok || v != 2 {
		t.Errorf("open loop knee %v %v", v, ok)
	}
}

func TestModelRunLlamaLike(t *testing.T) {
	r := &Run{Levels: llamaLevels()}
	// 4 slots of n_ctx 2048: an older recorder stored 4 × 2048 as the capacity;
	// llama.cpp does not say whether the slots share one cache, so neither figure
	// is declared, and the slots bind first either way (2048 / 600 = 3.4 < 4 is the
	// shared cache's bound, stated in the batch evidence).
	facts := serverFacts{Kind: "llamacpp", KVCapacityTokens: ip(8192), MaxModelLen: ip(2048), Slots: ip(4), NCtx: ip(2048)}
	err := modelRun(r, facts, workloadTokens{Mean: 600, P99: 700}, Options{SLO: SLO{TTFT: fp(1)}, BudgetInput: capacity.BudgetInput{ReserveGiB: -1}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Capacity
	if c == nil || c.Layout != LayoutUnknown || c.KVCapacityTokens != nil || c.DeclaredKVCapacityTokens != nil ||
		*c.KVCapacityMinTokens != 2048 || *c.KVCapacityMaxTokens != 8192 {
		t.Fatalf("capacity %+v", c)
	}
	if r.Ceilings.KV != nil {
		t.Errorf("kv ceiling %v from an unknown layout", *r.Ceilings.KV)
	}
	if ev := strings.Join(r.Ceiling.Evidence, "\n"); !strings.Contains(ev, "between 3.4 requests") {
		t.Errorf("evidence lacks the KV bounds: %q", ev)
	}
	if r.Ceilings.Batch == nil || *r.Ceilings.Batch != 4 {
		t.Errorf("batch %v", r.Ceilings.Batch)
	}
	if r.Ceilings.Knee == nil || *r.Ceilings.Knee != 4 {
		t.Errorf("knee %v", r.Ceilings.Knee)
	}
	if r.Ceiling.Binding != "batch" || *r.Ceiling.Concurrency != 4 {
		t.Errorf("ceiling %s %v, want batch 4 (knee ties, batch is the cause)", r.Ceiling.Binding, r.Ceiling.Concurrency)
	}
	if r.Ceilings.SLO == nil || *r.Ceilings.SLO <= 4 || *r.Ceilings.SLO >= 8 {
		t.Errorf("slo %v", r.Ceilings.SLO)
	}
	if r.Fit.USL == nil {
		t.Error("no USL fit")
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "plateau") || strings.Contains(w, "levels:") {
			t.Errorf("unexpected warning %q", w)
		}
	}
}

func TestModelRunModelledAndWarnings(t *testing.T) {
	// Kimi-K2.5 on 8 RTX PRO 6000 swept to 1024 with 3,000-token requests, and only
	// three levels, still rising: every sweep warning fires.
	r := &Run{Levels: []Level{level(256, 1000, 200, 56, 1), level(512, 1900, 400, 112, 2), level(1024, 3700, 800, 224, 3)}}
	opt := Options{ModelConfig: "../samples/models/kimi-k2.5.json", BudgetInput: capacity.BudgetInput{GPU: "rtx-pro-6000", GPUs: 8, TP: 8, WeightsGiB: 70.8, ReserveGiB: -1}}
	if err := modelRun(r, serverFacts{}, workloadTokens{Mean: 3000, P99: 3100}, opt); err != nil {
		t.Fatal(err)
	}
	c := r.Capacity
	if c == nil || c.Source != "modelled" || *c.KVBytesPerToken != 70272 || c.Budget == nil || c.DeclaredKVCapacityTokens != nil {
		t.Fatalf("capacity %+v", c)
	}
	if *c.MaxModelLen != 262144 || *c.ConcurrencyAtMaxModelLen > 1 {
		t.Errorf("max model len %v at %v", *c.MaxModelLen, *c.ConcurrencyAtMaxModelLen)
	}
	if r.Ceilings.KV == nil || *r.Ceilings.KV < 60 || *r.Ceilings.KV > 130 || r.Ceiling.Binding != "kv" {
		t.Errorf("kv ceiling %v binding %s", r.Ceilings.KV, r.Ceiling.Binding)
	}
	want := []string{"only 3 levels", "no plateau reached", "measure queueing"}
	all := strings.Join(r.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("missing warning %q in %q", w, all)
		}
	}

	// Measured beats modelled, the prediction stays beside it, and a large gap is flagged.
	r = &Run{Levels: llamaLevels()}
	if err := modelRun(r, serverFacts{Kind: "vllm", KVCapacityTokens: ip(351424)}, workloadTokens{Mean: 3000}, opt); err != nil {
		t.Fatal(err)
	}
	c = r.Capacity
	if c.Source != "declared" || *c.KVCapacityTokens != 351424 || c.ModelledKVCapacityTokens == nil || *c.DeclaredKVCapacityTokens != 351424 {
		t.Errorf("measured capacity %+v", c)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "differs from the model's prediction") {
		t.Errorf("no disagreement warning: %q", r.Warnings)
	}

	// Bad inputs are errors that name them.
	bad := []Options{
		{ModelConfig: "testdata/none.json"},
		{ModelConfig: "../samples/models/llama-3.1-8b.json", BudgetInput: capacity.BudgetInput{GPU: "tpu"}},
		{ModelConfig: "../samples/models/llama-3.1-8b.json", BudgetInput: capacity.BudgetInput{KVDtype: "int2"}},
	}
	for _, o := range bad {
		if err := modelRun(&Run{}, serverFacts{}, workloadTokens{}, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	// Nothing known: no capacity, no ceiling, no panic.
	r = &Run{}
	if err := modelRun(r, serverFacts{}, workloadTokens{}, Options{}); err != nil || r.Capacity != nil || r.Ceiling.Binding != "none" {
		t.Errorf("empty run: %v %+v %+v", err, r.Capacity, r.Ceiling)
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 351424: "351,424", -1234567: "-1,234,567"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q", n, got)
		}
	}
}

// TP 0 means one engine over every GPU (the analyze flags' convention), not GPUs replicas.
func TestBuildCapacityTPZeroMeansAllGPUs(t *testing.T) {
	opt := Options{ModelConfig: "../samples/models/llama-3.1-70b.json", BudgetInput: capacity.BudgetInput{GPU: "h100-sxm", GPUs: 8, ReserveGiB: -1}}
	c, _, err := buildCapacity(serverFacts{}, workloadTokens{Mean: 1000}, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if c.Budget.TP != 8 || *c.KVBytesPerToken != 40960 {
		t.Errorf("TP %d, %d bytes/token", c.Budget.TP, *c.KVBytesPerToken)
	}
	if want := float64(*c.KVCapacityTokens) / 1000; math.Abs(*c.ConcurrencyAtMeanRequest-want) > 1e-6*want {
		t.Errorf("concurrency %v, want %v (one replica)", *c.ConcurrencyAtMeanRequest, want)
	}
}

func TestModelRunWarnsOnThroughputCollapse(t *testing.T) {
	// A level beyond the peak that loses most of its throughput (seen on a real
	// llama.cpp server while a compiler shared its cores) is flagged; a plateau's
	// wobble of a few percent is not.
	collapse := []Level{level(1, 66, 0.98, 0.02, 0.05), level(2, 121, 1.85, 0.14, 0.25), level(4, 208, 3.87, 0.12, 0.06), level(8, 49, 3.83, 4.17, 10.5)}
	plateau := []Level{level(1, 66, 0.98, 0.02, 0.05), level(2, 121, 1.85, 0.14, 0.25), level(4, 208, 3.87, 0.12, 0.06), level(8, 199, 3.9, 4, 0.5)}
	for _, tc := range []struct {
		name   string
		levels []Level
		warn   bool
	}{{"collapse", collapse, true}, {"plateau", plateau, false}} {
		r := &Run{Levels: tc.levels}
		if err := modelRun(r, serverFacts{}, workloadTokens{Mean: 192}, Options{}); err != nil {
			t.Fatal(err)
		}
		all := strings.Join(r.Warnings, "\n")
		if got := strings.Contains(all, "throughput falls from 208 tok/s at concurrency 4 to 49 at 8 (76% less)"); got != tc.warn {
			t.Errorf("%s: collapse warning %v, want %v; warnings: %q", tc.name, got, tc.warn, all)
		}
	}
}
