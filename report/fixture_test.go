package report

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ceiling-llm/ceiling/analyze"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

func summary(n int, p50 float64) analyze.Summary {
	return analyze.Summary{N: n, Mean: f64(p50 * 1.1), P50: f64(p50), P90: f64(p50 * 1.6), P95: f64(p50 * 1.9), P99: f64(p50 * 2.6)}
}

// fixtureRun builds a realistic run: a doubling sweep against a server whose
// throughput saturates (USL-shaped), with KV capacity, a memory budget, a timeline of
// one level, an ITL histogram per level and server metrics. scale multiplies the
// throughput (a second quantization), reqs is the requests per level.
func fixtureRun(model, source string, levels, reqs int, scale float64, seed uint64) analyze.Run {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	sigma, kappa, lambda := 0.03, 0.0004, 62.0*scale
	usl := func(n float64) float64 { return lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1)) }
	r := analyze.Run{
		RunID:  "run-" + source,
		Source: source,
		Model:  model,
		Server: json.RawMessage(`{"kind":"vllm","version":"0.6.3","max_model_len":8192,"kv_capacity_tokens":351424,"block_size":16}`),
		Info: json.RawMessage(fmt.Sprintf(`{"tool":"ceiling","version":"0.1.0","run_id":"run-%s","started":"2025-01-02T10:00:00Z","ended":"2025-01-02T10:42:00Z",`+
			`"target":{"base_url":"http://10.0.0.5:8000","endpoint":"chat","model":%q},`+
			`"plan":{"mode":"closed","concurrency":[1,2,4,8,16,32,64,128,256,512],"requests_per_level":%d,"warmup":4,"prompt_tokens":1024,"output_tokens":256,"seed":7},`+
			`"server":{"kind":"vllm","version":"0.6.3","max_model_len":8192,"kv_capacity_tokens":351424,"block_size":16,"num_gpu_blocks":21964,"slots":null},`+
			`"client":{"cpus":16,"goos":"linux","goarch":"amd64","go_version":"go1.26"},`+
			`"declared":{"gpu":"h100-sxm","gpus":1,"tp":1,"notes":"fixture run"},"levels":[{"level":0},{"level":1}],"stop_reason":"plan complete"}`, source, model, reqs)),
		SLO: analyze.SLO{TTFT: f64(2), TPOT: f64(0.05)},
		Capacity: &analyze.Capacity{
			KVBytesPerToken: i64(131072), KVCapacityTokens: i64(351424), Source: "declared",
			ModelledKVCapacityTokens: i64(360000), DeclaredKVCapacityTokens: i64(351424),
			MaxModelLen: i64(8192), ConcurrencyAtMaxModelLen: f64(42.9), ConcurrencyAtMeanRequest: f64(274.5),
			ConcurrencyAtP99Request: f64(230.1), MeanRequestTokens: f64(1280), P99RequestTokens: f64(1527),
			Budget: &analyze.Budget{GPU: "h100-sxm", GPUs: 1, TP: 1, MemoryBytes: 80 << 30, Utilization: 0.9,
				WeightsBytes: 15 << 30, ReserveBytes: 4 << 30, KVBudgetBytes: 53 << 30, UnusableBytes: 8 << 30, KVDtype: "bf16"},
		},
		Fit:      analyze.Fit{USL: &analyze.USLFit{Sigma: sigma, Kappa: kappa, Lambda: lambda, NMax: f64(math.Sqrt((1 - sigma) / kappa)), R2: 0.991}},
		Ceilings: analyze.Ceilings{KV: f64(274.5), Batch: nil, Knee: f64(48), SLO: f64(96)},
		Ceiling:  analyze.Ceiling{Concurrency: f64(48), Binding: "knee", Evidence: []string{"throughput grows 4% from 64 to 128 while TTFT p99 doubles", "USL fit R² 0.991, σ 0.03, κ 0.0004"}},
		Warnings: []string{"level 9 (concurrency 512): 12 requests failed (http_503 12)"},
	}
	for i := 0; i < levels; i++ {
		c := 1 << i
		n := float64(c)
		x := usl(n) * (1 + 0.02*rng.NormFloat64())
		perUser := x / n
		ttft := 0.08 * (1 + math.Max(0, n-48)/24)
		tpot := 1 / perUser
		hist := &analyze.Histogram{}
		edge := 0.002
		for k := 0; k < 24; k++ {
			hist.Edges = append(hist.Edges, edge)
			d := math.Log(edge/tpot) / 0.35
			hist.Counts = append(hist.Counts, int64(2000*math.Exp(-d*d/2)+float64(rng.IntN(3))))
			edge *= 1.3
		}
		hist.Edges = append(hist.Edges, edge)
		l := analyze.Level{
			Level: i, Concurrency: c, Requests: reqs, Valid: true, WindowS: 50, WindowStartS: 3, WindowEndS: 53,
			OutputTokS: x, NaiveOutputTokS: x * 0.93, RequestS: x / 256, NaiveRequestS: x / 256 * 0.93,
			GoodputRequestS:   f64(x / 256 * math.Min(1, 96/n)),
			DecodeConcurrency: math.Min(n, 200) * 0.97, WaitingConcurrency: math.Max(0, n-200) + n*0.02,
			PerUserTokS: perUser, OutputTokens: int64(reqs * 256), MeanPromptTokens: 1024, MeanOutputTokens: 256,
			TTFT: summary(reqs, ttft), TTFC: summary(reqs, ttft), TPOT: summary(reqs, tpot), ITL: summary(reqs*255, tpot*0.98),
			E2E: summary(reqs, ttft+255*tpot), ITLHistogram: hist,
		}
		l.Workload = fixtureWorkload(reqs, n)
		if i == levels-1 && levels > 3 {
			l.Errors = 12
			l.ErrorKinds = map[string]int{"http_503": 12}
		}
		r.Levels = append(r.Levels, l)
	}
	// Timeline of the level nearest the ceiling: concurrency 32 workers.
	tl := &analyze.Timeline{Level: min(5, levels-1), Total: reqs}
	workers := 32
	free := make([]float64, workers)
	for k := 0; k < reqs; k++ {
		w := k % workers
		sent := free[w] + rng.Float64()*0.01
		first := sent + 0.05 + rng.ExpFloat64()*0.05
		end := first + 255*0.02*(1+0.1*rng.NormFloat64())
		req := analyze.TimelineRequest{Worker: w, Sent: sent, FirstToken: f64(first), End: end}
		if k%97 == 96 {
			req.FirstToken = nil
			req.Error = true
			end = sent + 0.3
			req.End = end
		}
		free[w] = end
		tl.Requests = append(tl.Requests, req)
	}
	if levels > 0 {
		r.Timeline = tl
	}
	for _, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:gpu_cache_usage_perc"} {
		m := analyze.MetricSeries{Name: name, Labels: `model_name="` + model + `"`}
		for t := 0.0; t < 2520; t += 5 {
			lvl := math.Min(float64(levels-1), math.Floor(t/252))
			n := math.Pow(2, lvl)
			var v float64
			switch name {
			case "vllm:num_requests_running":
				v = math.Min(n, 200)
			case "vllm:num_requests_waiting":
				v = math.Max(0, n-200)
			default:
				v = math.Min(0.99, n*1280/351424)
			}
			m.Points = append(m.Points, [2]float64{t, v})
		}
		for k := 0; k < levels; k++ {
			var sum, top float64
			var n int
			for _, p := range m.Points {
				if p[0] >= float64(k)*252+3 && p[0] <= float64(k)*252+53 {
					sum, top, n = sum+p[1], math.Max(top, p[1]), n+1
				}
			}
			if n > 0 {
				m.Levels = append(m.Levels, analyze.MetricLevel{Level: k, N: n, Mean: sum / float64(n), Max: top})
			}
		}
		r.Metrics = append(r.Metrics, m)
	}
	return r
}

// fixture is one realistic run of levels × reqs.
func fixture(levels, reqs int) *analyze.Analysis {
	return &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{fixtureRun("Llama-3.1-8B-Instruct", "llama-8b-bf16.parquet", levels, reqs, 1, 1)}}
}

// fixtureTwo is two quantizations of one model, for the overlay.
func fixtureTwo(levels, reqs int) *analyze.Analysis {
	a := fixtureRun("Llama-3.1-8B-Instruct", "llama-8b-bf16.parquet", levels, reqs, 1, 1)
	b := fixtureRun("Llama-3.1-8B-Instruct", "llama-8b-fp8.parquet", levels, reqs, 1.45, 2)
	b.Ceiling = analyze.Ceiling{Concurrency: f64(64), Binding: "slo"}
	b.Ceilings = analyze.Ceilings{KV: f64(410), Knee: f64(96), SLO: f64(64)}
	b.Capacity.KVCapacityTokens = i64(526000)
	b.Capacity.Budget.WeightsBytes = 8 << 30
	b.Capacity.Budget.KVBudgetBytes = 60 << 30
	return &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{a, b}}
}

// hostile is the string every user- or server-provided field gets in the safety test.
const hostile = `</script><img src=x onerror=alert(1)>`

// fixtureHostile puts hostile text in every string that comes from outside.
func fixtureHostile() *analyze.Analysis {
	a := fixture(4, 40)
	r := &a.Runs[0]
	r.Model = hostile
	r.Source = hostile + ".parquet"
	r.RunID = hostile
	r.Warnings = append(r.Warnings, hostile)
	r.Ceiling.Evidence = []string{hostile}
	r.Ceiling.Binding = hostile
	r.Capacity.Budget.GPU = hostile
	r.Capacity.Source = hostile
	r.Levels[1].ErrorKinds = map[string]int{hostile: 1}
	r.Levels[1].ErrorGroups = []analyze.ErrorGroup{{Kind: hostile, Message: hostile, Count: 1}}
	info, _ := json.Marshal(map[string]any{"target": map[string]any{"model": hostile, "base_url": hostile}, "declared": map[string]any{"notes": hostile}, hostile: hostile})
	r.Info = info
	r.Metrics[0].Name = hostile
	r.Metrics[0].Labels = hostile
	return a
}

// fixtureEmpty covers the nulls: no capacity, no fit, no ceiling, no SLOs, no timeline.
func fixtureEmpty(levels int) *analyze.Analysis {
	r := fixtureRun("tiny", "tiny.parquet", levels, 20, 1, 3)
	r.Capacity = nil
	r.Fit = analyze.Fit{}
	r.Ceilings = analyze.Ceilings{}
	r.Ceiling = analyze.Ceiling{}
	r.SLO = analyze.SLO{}
	r.Timeline = nil
	r.Metrics = nil
	r.Info = nil
	r.Server = nil
	r.Warnings = nil
	for i := range r.Levels {
		r.Levels[i].ITLHistogram = nil
		r.Levels[i].GoodputRequestS = nil
		r.Levels[i].TPOT = analyze.Summary{}
	}
	return &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{r}}
}

// fixtureRate is an open-loop (rate mode) run: levels are offered rates, not
// concurrencies, so no ceiling is drawn on the sweep axis.
func fixtureRate() *analyze.Analysis {
	a := fixture(6, 200)
	r := &a.Runs[0]
	r.Info = json.RawMessage(`{"target":{"endpoint":"completions","model":"Llama-3.1-8B-Instruct"},"plan":{"mode":"open","rates":[0.5,1,2,4,8,16],"duration_per_level_s":60,"warmup":4,"prompt_tokens":1024,"output_tokens":256},` +
		`"server":{"kind":"sglang","version":"0.4.1","max_model_len":8192},"declared":{"gpu":"a100-80g","gpus":2,"tp":2}}`)
	r.Server = json.RawMessage(`{"kind":"sglang","version":"0.4.1","max_model_len":8192}`)
	for i := range r.Levels {
		l := &r.Levels[i]
		l.Rate = 0.5 * math.Pow(2, float64(i))
		l.Concurrency = 0
		l.DecodeConcurrency = l.Rate * 6
		l.WaitingConcurrency = l.Rate * 0.4
	}
	r.Ceilings = analyze.Ceilings{KV: f64(274.5)}
	r.Ceiling = analyze.Ceiling{Binding: "none", Evidence: []string{"no ceiling found in the tested range"}}
	return a
}

// fixtureErrors is a run where the server failed under load: errors of several
// kinds, failed requests on the timeline, warnings saying so.
func fixtureErrors() *analyze.Analysis {
	a := fixture(8, 120)
	r := &a.Runs[0]
	for i := range r.Levels {
		l := &r.Levels[i]
		if i >= 4 {
			l.Errors = (i - 3) * 15
			l.ErrorKinds = map[string]int{"http_503": (i - 3) * 10, "timeout": (i - 3) * 4, "reset": i - 3}
			r.Warnings = append(r.Warnings, fmt.Sprintf("level %d (concurrency %d): %d of %d requests failed (%.1f%%): http_503 %d, timeout %d, reset %d",
				i, l.Concurrency, l.Errors, l.Requests, 100*float64(l.Errors)/float64(l.Requests), (i-3)*10, (i-3)*4, i-3))
		}
	}
	for k := range r.Timeline.Requests {
		if k%5 == 0 {
			q := &r.Timeline.Requests[k]
			q.FirstToken, q.Error = nil, true
			q.End = q.Sent + 2
		}
	}
	r.Ceilings = analyze.Ceilings{KV: f64(274.5), Knee: f64(16), SLO: f64(8)}
	r.Ceiling = analyze.Ceiling{Concurrency: f64(8), Binding: "slo", Evidence: []string{"TTFT p99 3.1 s misses the 2.00 s SLO at concurrency 16; it is met at 8; crossing interpolated at 8.60, so it is met up to 8 concurrent requests"}}
	return a
}

// fixtureWorkload is a level's lengths: prompts of about the 1,024 tokens asked
// (lognormal), answers that stop before max_tokens 256 once the server is loaded,
// and 3-turn conversations whose later turns the prefix cache serves.
func fixtureWorkload(reqs int, n float64) *analyze.Workload {
	out := 256.0
	if n >= 64 {
		out = 180
	}
	hit := 0.42
	w := &analyze.Workload{TargetPrompt: summary(reqs, 1024), Prompt: summary(reqs, 1031),
		MaxTokens:      analyze.Summary{N: reqs, Mean: f64(256), P50: f64(256), P90: f64(256), P95: f64(256), P99: f64(256)},
		Output:         summary(reqs, out),
		CachedRequests: reqs, PrefixHitShare: &hit}
	for k := 1; k <= 3; k++ {
		share := float64(k-1) * 0.3
		w.Turns = append(w.Turns, analyze.TurnStats{Turn: k, Requests: reqs / 3, PromptTokens: summary(reqs/3, float64(1024*k+256*(k-1))),
			PrefixHitShare: &share, TTFT: summary(reqs/3, 0.08*(1+n/48)/float64(k))})
	}
	return w
}
