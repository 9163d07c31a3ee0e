package capacity

import "fmt"

// CheckEngineShape refuses a deployment shape that no serving engine runs, naming
// the rule, so that nothing is predicted for it: tensor parallelism shards the
// attention heads evenly (vLLM and SGLang refuse a TP that does not divide
// num_attention_heads), each pipeline stage holds at least one layer, and no model
// has more KV heads than query heads. A config without heads (state-space layers
// only) has no head rule.
func CheckEngineShape(c *ModelConfig, s Shape) error {
	if c.KVHeads > 0 && c.Heads > 0 && c.KVHeads > c.Heads {
		return fmt.Errorf("model config %s: num_key_value_heads %d is above num_attention_heads %d: a model has at most as many KV heads as query heads", c.Path, c.KVHeads, c.Heads)
	}
	if c.Heads > 0 && s.TP > 1 && c.Heads%s.TP != 0 {
		return fmt.Errorf("BudgetInput.TP %d does not divide the model's %d attention heads (num_attention_heads): tensor parallelism shards the heads evenly, and engines refuse such a TP", s.TP, c.Heads)
	}
	if c.Layers > 0 && s.PP > c.Layers {
		return fmt.Errorf("BudgetInput.PP %d is more than the model's %d layers (num_hidden_layers): each pipeline stage holds at least one layer", s.PP, c.Layers)
	}
	return nil
}
