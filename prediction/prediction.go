// Package prediction holds what a deployment planner predicts a deployment serves
// (NVIDIA AIConfigurator, a planner's table in ceiling's planner format): predicted
// operating points, never measurements. Package importer reads planners' files
// into it; package analyze sets it beside a measured run.
package prediction

// Prediction is one planner's predicted operating points for one workload.
type Prediction struct {
	// Predicted is always true: the file holds predictions, not measurements.
	Predicted bool     `json:"predicted"`
	Schema    int      `json:"ceiling_prediction"`
	Tool      string   `json:"tool"`    // "aiconfigurator" or "planner"
	Planner   string   `json:"planner"` // the planner as the file names it, with its version
	Files     []string `json:"files"`
	Model     string   `json:"model,omitempty"`
	GPU       string   `json:"gpu,omitempty"` // the planner's name for the GPU ("b200_sxm")
	GPUs      int      `json:"gpus,omitempty"`
	// PromptTokens and OutputTokens are the workload's lengths (isl, osl), 0 when
	// the file does not say.
	PromptTokens float64  `json:"prompt_tokens,omitempty"`
	OutputTokens float64  `json:"output_tokens,omitempty"`
	Points       []Point  `json:"points"`
	Warnings     []string `json:"warnings,omitempty"`
}

// Point is one predicted operating point (one row of a planner's table).
type Point struct {
	Label       string  `json:"label"` // where it came from: "pareto.csv row 3"
	Concurrency float64 `json:"concurrency"`
	GPUs        int     `json:"gpus,omitempty"` // 0 = the prediction's
	// OutputTokSPerGPU is predicted output tokens per second per GPU.
	OutputTokSPerGPU float64  `json:"output_tok_s_per_gpu"`
	PerUserTokS      *float64 `json:"tok_s_per_user"`
	TTFTms           *float64 `json:"ttft_ms"`
	TPOTms           *float64 `json:"tpot_ms"`
	// BatchPerWorker is the decode batch one engine runs in the planner's model
	// (AIConfigurator's bs), when the file says.
	BatchPerWorker *float64 `json:"batch_per_worker,omitempty"`
	Config         string   `json:"config,omitempty"`
}
