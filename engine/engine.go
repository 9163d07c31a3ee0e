// Package engine is the one home of what ceiling knows about each LLM inference
// engine it meets: its name as traces and the analysis write it (one vocabulary
// for the recorder's probe, the trace's server kind and the analysis' server
// counters), how prose names it, the prefix and names of its /metrics series and
// what each one measures, where its declared KV capacity comes from, its words for
// a KV cache that ran out and for a request longer than its context, and the
// advice in its own flags and in those of the benchmark it ships.
//
// Each engine is one file (vllm.go, sglang.go, ...) returning its Engine; All lists
// them. Adding an engine is one such file, its line in All, and its tests. The
// package imports nothing of ceiling's but a number formatter, so that the
// recorder, the trace format, the importer and the analysis can all use it.
package engine

import "strings"

// Name is an engine's name as traces (trace.ServerInfo.Kind) and the analysis'
// JSON (server_counters.engine) write it. The strings are part of the trace format
// and never change.
type Name string

// The engines ceiling knows. Unknown is the server kind of a server the probe could
// not tell, or of an imported run whose tool did not say.
const (
	VLLM        Name = "vllm"
	SGLang      Name = "sglang"
	LlamaCpp    Name = "llamacpp"
	TGI         Name = "tgi"
	TensorRTLLM Name = "trtllm"
	NIM         Name = "nim"
	Unknown     Name = "unknown"
)

// Engine is what ceiling knows about one engine.
type Engine struct {
	Name Name
	// Title is how prose names the engine: "vLLM", "llama.cpp".
	Title string
	// OwnedBy is the owned_by its /v1/models entries carry ("" when it says
	// nothing of its own).
	OwnedBy string
	// MetricPrefix starts the names of its /metrics series ("vllm:"); "" for an
	// engine whose names carry no prefix of their own (NIM).
	MetricPrefix string
	// Metrics maps the names of its /metrics series to what each one measures.
	Metrics map[string]Role
	// TierMetrics maps the names, without _total, of its /metrics series that
	// say which KV tier served the prompt tokens to what each one measures (the
	// RoleTier roles); nil when ceiling reads none of its own. A name may be in
	// Metrics too, under another role (vLLM's prefix_cache_hits_total).
	TierMetrics map[string]Role
	// DeclaredKVSeries is the /metrics series whose labels declare its KV cache
	// (vLLM's cache_config_info: kv_cache_size_tokens, num_gpu_blocks,
	// block_size); "" when it declares none there.
	DeclaredKVSeries string
	// KVExhausted are its words, lower case, for a KV cache that ran out while
	// serving (the request fit alone); ContextExceeded its words for one request
	// longer than the context a sequence may hold.
	KVExhausted     []string
	ContextExceeded []string
	// KVSource names where the engine's declared KV capacity d comes from, in
	// its own terms; nil when ceiling reads no declared capacity of its own.
	KVSource func(d DeclaredKV) string
	// ContextFlag is the server flag that sets the context one request may use
	// ("--max-model-len"); "" when ceiling has no advice in its flags.
	ContextFlag string
	// SlotContext is true when the context the server reports (n_ctx) is what
	// one slot holds, not the model's whole context, and SlotContextFix is the
	// advice in its flags for a workload longer than that.
	SlotContext    bool
	SlotContextFix string
	// CutsAtContext is true when a request that reaches the context's end while
	// generating is cut there and answered, not refused.
	CutsAtContext bool
	// MinTokens is true when its completions API takes min_tokens, so that
	// ignore_eos with min_tokens = max_tokens asks for exact output lengths.
	MinTokens bool
	// Prefix is how the engine's KV cache holds a prompt prefix that running
	// requests share: nil when ceiling credits no sharing for it (llama.cpp, whose
	// slots each keep their own copy; engines whose behaviour is not checked).
	Prefix *PrefixSharing
	// Bench is the advice in the flags of the benchmark the engine ships (vLLM's
	// vllm bench serve), nil when it ships none ceiling imports.
	Bench *Bench
}

// PrefixSharing is an engine's cache of shared prefixes: a prefix that running
// requests share is held once, in units of BlockTokens (only full units are
// shared), and caching is on unless the server turns it off (Default).
type PrefixSharing struct {
	BlockTokens int
	Default     bool
	// How names the mechanism in prose: "automatic prefix caching (full blocks
	// of 16 tokens)".
	How string
}

// DeclaredKV is the KV capacity a server declared, as its engine states it.
type DeclaredKV struct {
	Tokens int64
	// NumGPUBlocks and BlockSize are vLLM's cache_config_info labels, nil when
	// not stated.
	NumGPUBlocks, BlockSize *int64
}

// Bench is advice in the flags of an engine's own benchmark tool, for runs
// imported from it.
type Bench struct {
	// Rerun says how to rerun levels the tool could not keep full, when a level's
	// steady-state window needs completions requests at concurrency c.
	Rerun func(completions, c int) string
	// Higher says how to test past the run's highest level.
	Higher string
}

// All lists the engines ceiling knows, in the order the analysis tells their
// metrics apart (NIM, whose vLLM names carry no prefix, last).
func All() []Engine {
	return []Engine{vllm(), sglang(), llamaCpp(), tgi(), tensorRTLLM(), nim()}
}

// Of returns the engine named n; ok is false for Unknown and any name not in All.
func Of(n Name) (Engine, bool) {
	for _, e := range All() {
		if e.Name == n {
			return e, true
		}
	}
	return Engine{}, false
}

// OfMetric names the engine whose /metrics series name is: the engine whose
// prefix it carries, else NIM (the only engine without a prefix of its own).
func OfMetric(name string) Name {
	if n, ok := OfMetricPrefix(name); ok {
		return n
	}
	return NIM
}

// OfMetricPrefix names the engine whose own prefix the /metrics series name
// carries; ok is false for a name with no engine's prefix (process_, python_ ...).
func OfMetricPrefix(name string) (Name, bool) {
	for _, e := range All() {
		if e.MetricPrefix != "" && strings.HasPrefix(name, e.MetricPrefix) {
			return e.Name, true
		}
	}
	return Unknown, false
}

// OfOwnedBy names the engine whose /v1/models entries carry owned_by; ok is false
// for an owner no engine writes (an organisation's name, "system").
func OfOwnedBy(ownedBy string) (Name, bool) {
	for _, e := range All() {
		if e.OwnedBy != "" && e.OwnedBy == ownedBy {
			return e.Name, true
		}
	}
	return Unknown, false
}

// ContextFlags is the advice for serving a model with a longer context, in each
// engine's own flag: "vLLM: --max-model-len; SGLang: --context-length".
func ContextFlags() string {
	var parts []string
	for _, e := range All() {
		if e.ContextFlag != "" {
			parts = append(parts, e.Title+": "+e.ContextFlag)
		}
	}
	return strings.Join(parts, "; ")
}

// BenchOf returns the advice of the engine whose benchmark tool (an imported run's
// source tool, "vllm" or "vllm-sweep") is tool, nil when tool is no engine's.
func BenchOf(tool string) *Bench {
	t := strings.ToLower(tool)
	for _, e := range All() {
		if e.Bench != nil && strings.HasPrefix(t, string(e.Name)) {
			return e.Bench
		}
	}
	return nil
}

// KVExhaustedTexts are every engine's words, lower case, for a KV cache that ran
// out while serving: an error text containing one is a full cache.
func KVExhaustedTexts() []string {
	var out []string
	for _, e := range All() {
		out = append(out, e.KVExhausted...)
	}
	// Words tied to no one engine here: servers and gateways in front of one.
	return append(out, "kv cache is full", "kv cache pool is full")
}

// ContextExceededTexts are every engine's words, lower case, for one request
// longer than the context a sequence may hold.
func ContextExceededTexts() []string {
	var out []string
	for _, e := range All() {
		out = append(out, e.ContextExceeded...)
	}
	// OpenAI's error code, which OpenAI-style gateways return too.
	return append(out, "context_length_exceeded")
}
