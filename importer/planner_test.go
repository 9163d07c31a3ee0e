package importer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/sharedtest"
)

func TestReadPredictionFiles(t *testing.T) {
	for _, tc := range []struct {
		file        string
		tool        string
		points      int
		c0, tps0    float64 // the first point after sorting by concurrency
		user0       float64
		gpus        int
		prompt, out float64
	}{
		{"aiconfigurator-1396-best_config_topn.csv", FromAIConfigurator, 3, 216, 560.42, 22.54, 8, 8192, 1024},
		{"planner-generic.json", FromPlanner, 2, 64, 350, 40, 8, 8192, 1024},
		{"planner-generic.csv", FromPlanner, 2, 64, 350, 40, 0, 0, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p, err := ReadPrediction(filepath.Join("testdata", "planner", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !p.Predicted || p.Tool != tc.tool || len(p.Points) != tc.points {
				t.Fatalf("predicted %v tool %q points %d; want true %q %d", p.Predicted, p.Tool, len(p.Points), tc.tool, tc.points)
			}
			pt := p.Points[0]
			if pt.Concurrency != tc.c0 || pt.OutputTokSPerGPU != tc.tps0 || pt.PerUserTokS == nil || *pt.PerUserTokS != tc.user0 {
				t.Errorf("first point %+v; want c=%g %g tok/s/GPU %g tok/s/user", pt, tc.c0, tc.tps0, tc.user0)
			}
			if p.GPUs != tc.gpus || p.PromptTokens != tc.prompt || p.OutputTokens != tc.out {
				t.Errorf("gpus %d lengths %g/%g; want %d %g/%g", p.GPUs, p.PromptTokens, p.OutputTokens, tc.gpus, tc.prompt, tc.out)
			}
			last := p.Points[len(p.Points)-1]
			if last.Concurrency != 384 || last.OutputTokSPerGPU != 883.7 {
				t.Errorf("last point %+v; want the 1396 prediction c=384 at 883.7", last)
			}
		})
	}
}

func TestReadAIConfiguratorDisagg(t *testing.T) {
	// A disaggregated row in AIConfigurator's ColumnsDisagg layout.
	csv := "model,isl,osl,prefix,concurrency,request_rate,(p)bs,(p)global_bs,(p)workers,(d)bs,(d)global_bs,(d)workers," +
		"ttft,tpot,request_latency,seq/s,seq/s/gpu,tokens/s,tokens/s/gpu,tokens/s/user,(p)seq/s/worker,(d)seq/s/worker,num_total_gpus," +
		"(p)tp,(p)pp,(p)dp,(p)moe_tp,(p)moe_ep,(p)parallel,(d)tp,(d)pp,(d)dp,(d)moe_tp,(d)moe_ep,(d)parallel\n" +
		"Qwen/Qwen3-235B-A22B-FP8,4000,200,0,64,14.375,1,2,4,64,64,1,901.561,19.779,4837.582,14.375,0.898,2874.96,179.685,50.559," +
		"3.993,16.26,16,1,1,2,1,2,tp1pp1dp2etp1ep2,8,1,1,1,8,tp8pp1dp1etp1ep8\n"
	path := filepath.Join(t.TempDir(), "pareto.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ReadPrediction(path)
	if err != nil {
		t.Fatal(err)
	}
	pt := p.Points[0]
	if pt.Concurrency != 64 || pt.OutputTokSPerGPU != 179.685 || *pt.TTFTms != 901.561 || *pt.TPOTms != 19.779 || pt.GPUs != 16 {
		t.Errorf("point %+v", pt)
	}
	if pt.BatchPerWorker == nil || *pt.BatchPerWorker != 64 {
		t.Errorf("decode batch per worker %v; want 64 from (d)bs", pt.BatchPerWorker)
	}
	for _, want := range []string{"disaggregated", "prefill tp1pp1dp2etp1ep2 × 4", "decode tp8pp1dp1etp1ep8 × 1"} {
		if !strings.Contains(pt.Config, want) {
			t.Errorf("config %q lacks %q", pt.Config, want)
		}
	}
}

// Malformed planner files are refused with an error naming the file and what is wrong.
func TestReadPredictionMalformed(t *testing.T) {
	aicHead := "model,isl,osl,concurrency,ttft,tpot,tokens/s/gpu,tokens/s/user,num_total_gpus\n"
	for _, tc := range []struct {
		name, body, want string
		notPrediction    bool
	}{
		{"empty.csv", "", "empty", true},
		{"header-only.csv", aicHead, "no predicted point", false},
		{"no-throughput.csv", "model,concurrency,ttft\nm,4,10\n", "no header with concurrency", true},
		{"text-in-number.csv", aicHead + "m,1024,128,four,10,5,100,20,8\n", `concurrency "four" is not a number`, false},
		{"short-row.csv", aicHead + "m,1024,128,4,10\n", "row 1 has 5 fields, the header 9", false},
		{"zero-concurrency.csv", aicHead + "m,1024,128,0,10,5,100,20,8\n", "concurrency 0 must be a number from 1", false},
		{"negative-tps.csv", aicHead + "m,1024,128,4,10,5,-3,20,8\n", "output tokens/s per GPU -3 must be a positive number", false},
		{"empty-tps.csv", aicHead + "m,1024,128,4,10,5,,20,8\n", "tokens/s/gpu is empty", false},
		{"negative-ttft.csv", aicHead + "m,1024,128,4,-10,5,100,20,8\n", "TTFT (ms) -10 must be a non-negative number", false},
		{"inf.csv", aicHead + "m,1024,128,4,10,5,inf,20,8\n", `tokens/s/gpu "inf" is not a number`, false},
		{"bad-json.json", `{"ceiling_prediction": 1, "points": [`, "planner JSON", false},
		{"wrong-schema.json", `{"ceiling_prediction": 2, "points": []}`, "ceiling_prediction must be 1", false},
		{"no-points.json", `{"ceiling_prediction": 1, "points": []}`, "no predicted point", false},
		{"json-bad-point.json", `{"ceiling_prediction": 1, "points": [{"concurrency": 8}]}`, "points[0]: output tokens/s per GPU 0", false},
		{"other-json.json", `{"ttfts": [1]}`, "JSON without ceiling_prediction", true},
		{"generic-missing.csv", "concurrency,output_tok_s_per_gpu,tok_s_per_user\n8,,3\n", "output_tok_s_per_gpu is empty", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.name)
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadPrediction(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
				t.Errorf("error %q; want it to name %s and say %q", err, tc.name, tc.want)
			}
			if errors.Is(err, ErrNotPrediction) != tc.notPrediction {
				t.Errorf("errors.Is(ErrNotPrediction) = %v; want %v", !tc.notPrediction, tc.notPrediction)
			}
		})
	}
}

// A benchmark's result file is not a prediction: the importers' files stay theirs.
func TestDetectPredictionLeavesBenchmarks(t *testing.T) {
	// The shared peer results are read in place (see real_test.go).
	peers := sharedtest.Dir(t, "peer-results")
	files, _ := filepath.Glob(filepath.Join(peers, "*.json*"))
	if len(files) < 3 {
		t.Fatalf("%d peer results in %s; want at least 3", len(files), peers)
	}
	for _, f := range files[:3] {
		if _, err := DetectPrediction(f); !errors.Is(err, ErrNotPrediction) {
			t.Errorf("%s: %v; want ErrNotPrediction", f, err)
		}
	}
}
