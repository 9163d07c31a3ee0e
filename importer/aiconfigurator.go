package importer

import (
	"fmt"
	"path/filepath"
	"strings"
)

// NVIDIA AIConfigurator (github.com/ai-dynamo/aiconfigurator, Apache-2.0) writes, per
// experiment under --save_dir, pareto.csv (every non-dominated configuration) and
// best_config_topn.csv (the top N under the SLA), both pandas.DataFrame.to_csv of
// its summary columns (sdk/common.py ColumnsAgg and ColumnsDisagg):
//
//	model,isl,osl,prefix,concurrency,request_rate,bs,global_bs,ttft,tpot,
//	request_latency,seq/s,seq/s/gpu,tokens/s,tokens/s/gpu,tokens/s/user,
//	num_total_gpus,tp,pp,dp,moe_tp,moe_ep,parallel,gemm,kvcache,fmha,moe,comm,
//	memory,...,backend,version,system,power_w
//
// and for disaggregated serving (p)/(d)-prefixed bs, global_bs, workers, tp, pp,
// dp, moe_tp, moe_ep and parallel for the prefill and decode workers. ttft, tpot
// and request_latency are in milliseconds; tokens/s/gpu is output tokens per
// second per GPU, tokens/s/user the per-user decode speed. Columns are found by
// name, so added or reordered ones (tokens/s/gpu_cluster, deployment_mode, power)
// do not matter; a missing required one is an error naming it.

func parseAIConfigurator(path string, data []byte) (*Prediction, error) {
	t, err := readTable(path, data)
	if err != nil {
		return nil, err
	}
	if err := t.require("concurrency", "tokens/s/gpu"); err != nil {
		return nil, fmt.Errorf("%w (an AIConfigurator pareto.csv or best_config_topn.csv has both)", err)
	}
	disagg := t.has("(d)bs") || t.has("(d)parallel")
	p := &Prediction{Tool: FromAIConfigurator, Planner: "AIConfigurator"}
	name := filepath.Base(path)
	for r := range t.rows {
		pt := PredictedPoint{Label: fmt.Sprintf("%s row %d", name, r+1)}
		if pt.Concurrency, err = t.number(r, "concurrency"); err != nil {
			return nil, err
		}
		if pt.OutputTokSPerGPU, err = t.number(r, "tokens/s/gpu"); err != nil {
			return nil, err
		}
		if pt.PerUserTokS, err = t.optional(r, "tokens/s/user"); err != nil {
			return nil, err
		}
		if pt.TTFTms, err = t.optional(r, "ttft"); err != nil {
			return nil, err
		}
		if pt.TPOTms, err = t.optional(r, "tpot"); err != nil {
			return nil, err
		}
		gpus, err := t.optional(r, "num_total_gpus")
		if err != nil {
			return nil, err
		}
		if gpus != nil {
			pt.GPUs = int(*gpus)
		}
		bsCol, parCol := "bs", "parallel"
		if disagg {
			bsCol, parCol = "(d)bs", "(d)parallel"
		}
		if pt.BatchPerWorker, err = t.optional(r, bsCol); err != nil {
			return nil, err
		}
		var cfg []string
		if disagg {
			cfg = append(cfg, "disaggregated")
			if s := t.text(r, "(p)parallel"); s != "" {
				cfg = append(cfg, fmt.Sprintf("prefill %s × %s", s, orDash(t.text(r, "(p)workers"))))
			}
			if s := t.text(r, parCol); s != "" {
				cfg = append(cfg, fmt.Sprintf("decode %s × %s", s, orDash(t.text(r, "(d)workers"))))
			}
		} else if s := t.text(r, parCol); s != "" {
			cfg = append(cfg, s)
		}
		if pt.BatchPerWorker != nil {
			cfg = append(cfg, fmt.Sprintf("batch %g per worker", *pt.BatchPerWorker))
		}
		for _, c := range []string{"gemm", "kvcache"} {
			if s := t.text(r, c); s != "" {
				cfg = append(cfg, c+" "+s)
			}
		}
		pt.Config = strings.Join(cfg, ", ")
		if err := checkPoint(path, pt); err != nil {
			return nil, err
		}
		p.Points = append(p.Points, pt)
		// The workload and system are per row; the first row's name the file.
		if r == 0 {
			p.Model = t.text(r, "model")
			p.GPU = t.text(r, "system")
			if b := strings.TrimSpace(t.text(r, "backend") + " " + t.text(r, "version")); b != "" {
				p.Planner += " (" + b + ")"
			}
			if v, err := t.optional(r, "isl"); err == nil && v != nil {
				p.PromptTokens = *v
			}
			if v, err := t.optional(r, "osl"); err == nil && v != nil {
				p.OutputTokens = *v
			}
			p.GPUs = pt.GPUs
		}
	}
	if err := checkLengths(path, p); err != nil {
		return nil, err
	}
	return p, nil
}

func orDash(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
