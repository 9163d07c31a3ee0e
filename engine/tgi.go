package engine

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// tgi is Hugging Face's Text Generation Inference. Its /metrics names:
// tgi_batch_current_size, tgi_queue_size, tgi_batch_current_max_tokens. Its errors
// (flash_causal_lm.py): "Out of available cache blocks: asked N, only M free
// blocks"; "`inputs` tokens + `max_new_tokens` must be <= N" for a request too long.
func tgi() Engine {
	return Engine{
		Name:         TGI,
		Title:        "TGI",
		MetricPrefix: "tgi_",
		Metrics: map[string]Role{
			"tgi_batch_current_size":       RoleRunning,
			"tgi_queue_size":               RoleWaiting,
			"tgi_batch_current_max_tokens": RoleUsedTokens,
		},
		KVSource: func(d DeclaredKV) string {
			return fmt.Sprintf("TGI max_batch_total_tokens %s (/info)", numfmt.Int(d.Tokens))
		},
		KVExhausted:     []string{"out of available cache blocks"},
		ContextExceeded: []string{"max_new_tokens` must be <="},
	}
}
