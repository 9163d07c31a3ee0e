// Package capacity is the capacity model of an LLM deployment, with no trace needed:
// how many KV-cache tokens a deployment holds, from a Hugging Face config.json and the
// GPU catalog, and how many requests of a given length that is.
//
//   - [ModelConfig] is the part of config.json the model reads (layers, attention,
//     experts, dtypes), and what each layer keeps per request.
//   - [KVModel] is the KV footprint per token and per request on one GPU at one
//     tensor-parallel size (GQA/MHA, MLA, sliding windows, linear-attention and Mamba
//     state).
//   - [ParamCount] and [WeightBytes] estimate the weights when they are not given.
//   - [GPU] is an entry of the built-in catalog ([LookupGPU]).
//   - [PlanBudget] spends one GPU's memory (memory × utilization − weights − reserve)
//     and gives the KV capacity; [ProposeLevels] proposes sweep levels that bracket the
//     ceiling it predicts.
//
// Errors name the fields of [BudgetInput] and of config.json; a command-line front end
// maps them to its flags.
package capacity
