package enginetest

import (
	"fmt"
	"time"
)

// Schedulers: Config.Scheduler picks how the engine shares its KV cache. The default
// ("") reserves prompt+max_tokens at admission, so the cache never fills and nothing
// is ever preempted: a request simply waits until its whole reservation fits. The
// others run a step-by-step engine loop that imitates a real server under KV
// pressure, each after that server's source:
//
//   - SchedulerVLLM: vLLM v1 (vllm/v1/core/sched/scheduler.py, kv_cache_manager.py).
//     Paged blocks of 16 tokens. Each step schedules the running requests first, one
//     token each (or the next chunk of a prefill, within MaxBatchedTokens); a request
//     that needs a new block when none is free preempts the newest running request
//     (running.pop()), whose blocks are freed and which goes back to the head of the
//     waiting queue to be recomputed from scratch (prompt + the tokens it had
//     generated). Only in a step without preemption are waiting requests admitted, in
//     order, while Slots (max_num_seqs) allows, the token budget lasts and the blocks
//     of the tokens to compute are free beyond the watermark (1% of the blocks, once
//     another request is scheduled). /metrics adds vllm:num_preemptions_total and
//     vllm:kv_cache_usage_perc counts allocated blocks.
//   - SchedulerSGLang: SGLang's token-to-KV pool (max_total_num_tokens = KVTokens,
//     page size 1). A step is a prefill of newly admitted requests when the waiting
//     head fits — prompt + remaining max_new_tokens against the free tokens less what
//     the running requests are expected to still need (their remaining output ×
//     new_token_ratio, which starts at 0.7 and decays to 0.098 over 600 decode steps)
//     — else a decode step of every running request. A decode step that finds fewer
//     free tokens than running requests retracts requests (fewest generated first,
//     then longest prompt) until 20 decode steps fit for the rest, frees their tokens
//     and re-queues them for recompute, and raises new_token_ratio. /metrics adds
//     sglang:num_retracted_reqs (retracted in the last 40 steps),
//     sglang:num_used_tokens; sglang:token_usage is rounded to 2 decimals as SGLang does.
//   - SchedulerLlamaUnified: llama.cpp with one unified KV cache of KVTokens cells
//     shared by Slots slots (each slot's n_ctx is the whole cache, as /props reports).
//     Slots take requests in order; a prompt of n_ctx tokens or more is refused with
//     400 exceed_context_size_error. A batch that needs more cells than are free fails
//     every processing slot with "Context size has been exceeded." (HTTP 500
//     server_error before a stream's first token, a `data: {"error":...}` event after
//     it), as llama.cpp's update_slots does once halving the batch no longer helps.
//   - SchedulerLlamaSlots: llama.cpp with per-slot caches (-np N without
//     --kv-unified): each slot owns KVTokens/Slots cells; a prompt that fills its slot
//     is refused with 400, and generation stops with finish_reason "length" where the
//     slot's context ends (context shift disabled). Slots bind; the cache never fails.
//
// A step lasts StepTime, plus TokenTime per token it computes (prefill, recompute
// and decode tokens alike), plus WaitingTime per request waiting in the engine.
// Recomputing preempted requests costs tokens, and a long queue costs time (the
// scheduler's and the API server's bookkeeping), so past its KV capacity the
// engine's token rate falls instead of plateauing. Recompute alone costs only a few
// percent here, as preemption takes the newest request, which has generated little;
// the queue cost is calibrated so that the fall from c=256 to c=1024 in a cache of
// 68 requests (curve_test.go) is about that of the published vLLM figures (3,086 to
// ~2,740 tok/s), not derived from vLLM's source. TTFT and TokenGap are not used by
// these schedulers.
const (
	SchedulerReserve      = ""
	SchedulerVLLM         = "vllm"
	SchedulerSGLang       = "sglang"
	SchedulerLlamaUnified = "llamacpp-unified"
	SchedulerLlamaSlots   = "llamacpp-slots"
)

// Defaults of the step schedulers.
const (
	defaultStepTime         = 2 * time.Millisecond
	defaultTokenTime        = 10 * time.Microsecond
	defaultWaitingTime      = time.Microsecond
	defaultMaxBatchedTokens = 8192 // vLLM max_num_batched_tokens, SGLang chunked_prefill_size
	defaultLlamaBatch       = 2048 // llama.cpp n_batch
	defaultVLLMMaxSeqs      = 256  // vLLM max_num_seqs
	defaultVLLMWatermark    = 0.01
	defaultSGLangMaxRunning = 4096
)

// kindForScheduler is the probe Kind each scheduler implies.

var kindForScheduler = map[string]string{
	SchedulerVLLM:         "vllm",
	SchedulerSGLang:       "sglang",
	SchedulerLlamaUnified: "llamacpp",
	SchedulerLlamaSlots:   "llamacpp",
}

// checkScheduler validates and completes the step scheduler settings of cfg.
func checkScheduler(cfg *Config) error {
	if cfg.Scheduler == SchedulerReserve {
		return nil
	}
	kind, ok := kindForScheduler[cfg.Scheduler]
	if !ok {
		return fmt.Errorf("config Scheduler %q: want \"\", %q, %q, %q or %q", cfg.Scheduler,
			SchedulerVLLM, SchedulerSGLang, SchedulerLlamaUnified, SchedulerLlamaSlots)
	}
	if cfg.Kind == "" {
		cfg.Kind = kind
	}
	if cfg.Kind != kind {
		return fmt.Errorf("config Scheduler %q imitates %q, but Kind is %q", cfg.Scheduler, kind, cfg.Kind)
	}
	if cfg.KVTokens <= 0 {
		return fmt.Errorf("config Scheduler %q needs KVTokens (the KV cache size), got %d", cfg.Scheduler, cfg.KVTokens)
	}
	if cfg.StepTime < 0 || cfg.TokenTime < 0 || cfg.WaitingTime < 0 || cfg.MaxBatchedTokens < 0 || cfg.Watermark < 0 || cfg.Watermark >= 1 {
		return fmt.Errorf("config has a negative StepTime, TokenTime, WaitingTime or MaxBatchedTokens, or a Watermark outside [0, 1): %v, %v, %v, %d, %g",
			cfg.StepTime, cfg.TokenTime, cfg.WaitingTime, cfg.MaxBatchedTokens, cfg.Watermark)
	}
	if cfg.DataParallel < 0 || (cfg.DataParallel > 1 && cfg.Scheduler != SchedulerVLLM) {
		return fmt.Errorf("config DataParallel %d: only the vLLM scheduler runs data-parallel engines", cfg.DataParallel)
	}
	if cfg.DataParallel > 1 && vllmBefore010(cfg.Version) {
		return fmt.Errorf("config DataParallel %d with Version %q: data-parallel engines are labelled from vLLM 0.10 on", cfg.DataParallel, cfg.Version)
	}
	if cfg.StepTime == 0 && cfg.TokenTime == 0 && cfg.WaitingTime == 0 {
		cfg.StepTime, cfg.TokenTime, cfg.WaitingTime = defaultStepTime, defaultTokenTime, defaultWaitingTime
	}
	switch cfg.Scheduler {
	case SchedulerVLLM:
		if cfg.Slots == 0 {
			cfg.Slots = defaultVLLMMaxSeqs
		}
		if cfg.MaxBatchedTokens == 0 {
			cfg.MaxBatchedTokens = defaultMaxBatchedTokens
		}
		if cfg.Watermark == 0 {
			cfg.Watermark = defaultVLLMWatermark
		}
		if cfg.MaxModelLen > cfg.KVTokens {
			// vLLM refuses to start when one request of max_model_len cannot fit.
			return fmt.Errorf("config MaxModelLen %d is larger than the KV cache of %d tokens (vLLM does not start so)", cfg.MaxModelLen, cfg.KVTokens)
		}
	case SchedulerSGLang:
		if cfg.Slots == 0 {
			cfg.Slots = defaultSGLangMaxRunning
		}
		if cfg.MaxBatchedTokens == 0 {
			cfg.MaxBatchedTokens = defaultMaxBatchedTokens
		}
	case SchedulerLlamaUnified, SchedulerLlamaSlots:
		if cfg.Slots == 0 {
			cfg.Slots = 1
		}
		if cfg.MaxBatchedTokens == 0 {
			cfg.MaxBatchedTokens = defaultLlamaBatch
		}
		if cfg.Scheduler == SchedulerLlamaSlots && cfg.KVTokens/cfg.Slots < 2 {
			return fmt.Errorf("config KVTokens %d over %d slots leaves under 2 tokens a slot", cfg.KVTokens, cfg.Slots)
		}
	}
	return nil
}

// slotContext is the n_ctx of one llama.cpp slot: the whole cache when unified.
func (c *Config) slotContext() int {
	if c.Scheduler == SchedulerLlamaSlots {
		return c.KVTokens / c.Slots
	}
	return c.KVTokens
}

// stepDuration is how long a step computing n tokens with waiting requests queued
// takes.
func (c *Config) stepDuration(n, waiting int) time.Duration {
	return c.StepTime + time.Duration(n)*c.TokenTime + time.Duration(waiting)*c.WaitingTime
}
