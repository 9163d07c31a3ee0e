package trace

// Column names of a trace (Row), schema version 2. They are the parquet tags of
// Row's fields; TestColumnsMatchTags keeps the two from drifting.
const (
	ColRunID              = "run_id"
	ColLevel              = "level"
	ColConcurrency        = "concurrency"
	ColRate               = "rate"
	ColRequestID          = "request_id"
	ColWorker             = "worker"
	ColWarmup             = "warmup"
	ColScheduledNs        = "scheduled_ns"
	ColSentNs             = "sent_ns"
	ColFirstTokenNs       = "first_token_ns"
	ColFirstContentNs     = "first_content_ns"
	ColEndNs              = "end_ns"
	ColChunkGapsUs        = "chunk_gaps_us"
	ColPromptTokens       = "prompt_tokens"
	ColOutputTokens       = "output_tokens"
	ColReasoningTokens    = "reasoning_tokens"
	ColCachedTokens       = "cached_tokens"
	ColTokensSource       = "tokens_source"
	ColTargetPromptTokens = "target_prompt_tokens"
	ColMaxTokens          = "max_tokens"
	ColStatus             = "status"
	ColFinishReason       = "finish_reason"
	ColError              = "error"
	ColConversationID     = "conversation_id" // schema version 2
	ColTurn               = "turn"            // schema version 2
)

// Column names of the metrics sidecar (MetricSample).
const (
	SampleTsNs   = "ts_ns"
	SampleName   = "name"
	SampleLabels = "labels"
	SampleValue  = "value"
)
