package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrUnknownFormat is wrapped by Detect's error for a file no importer reads (a
// ceiling trace, or a foreign file).
var ErrUnknownFormat = errors.New("not a result file of a known benchmark tool")

// detectBytes is how much of a file Detect reads: the keys it looks for come
// before the bulk of the per-request arrays' text.
const detectBytes = 4 << 20

// Detect says which tool wrote path, from its content (never its name): a
// directory of run=N.json points is a vLLM sweep; a JSON file is told apart by
// keys only its tool writes. A Parquet file, or anything else, gives an error
// wrapping ErrUnknownFormat.
func Detect(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	if st.IsDir() {
		if tool := detectDir(path); tool != "" {
			return tool, nil
		}
		if _, err := sweepPoints(path); err == nil {
			return FromVLLMSweep, nil
		}
		return "", fmt.Errorf("%s: %w (a directory without vllm bench sweep points)", path, ErrUnknownFormat)
	}
	if !st.Mode().IsRegular() {
		// A FIFO or device would block the open or the read: leave it to the
		// trace reader, whose error names what it is.
		return "", fmt.Errorf("%s: %w (not a regular file)", path, ErrUnknownFormat)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, detectBytes))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return detectContent(filepath.Base(path), head)
}

func detectContent(name string, head []byte) (string, error) {
	if bytes.HasPrefix(head, []byte("PAR1")) {
		return "", fmt.Errorf("%s: %w (a Parquet file)", name, ErrUnknownFormat)
	}
	text := bytes.TrimSpace(head)
	has := func(keys ...string) bool {
		for _, k := range keys {
			if bytes.Contains(text, []byte(`"`+k+`"`)) {
				return true
			}
		}
		return false
	}
	if bytes.HasPrefix(text, []byte("Metric,")) {
		return FromAIPerf, nil // AIPerf's CSV summary; readAIPerf says where the records are
	}
	if bytes.Contains(text, []byte("request_performance:")) && bytes.Contains(text, []byte("scenario:")) && bytes.Contains(text, []byte("version:")) {
		return FromLLMD, nil // an llm-d-benchmark report in YAML
	}
	if len(text) == 0 || (text[0] != '{' && text[0] != '[') {
		return "", fmt.Errorf("%s: %w (not JSON)", name, ErrUnknownFormat)
	}
	switch {
	case has("request_performance") && has("scenario"):
		return FromLLMD, nil
	case has("output_tput_per_gpu") && has("conc"):
		return FromInferenceX, nil
	case text[0] == '[' && has("ttft_s") && has("end_to_end_latency_s"):
		return FromLLMPerf, nil
	case text[0] == '{' && has("results_ttft_s_mean", "results_num_completed_requests_per_min"):
		return FromLLMPerf, nil // llmperf's summary: readLLMPerf says where the records are
	case text[0] == '[' && has("start_time") && has("end_time") && has("info"):
		return FromInferencePerf, nil
	case text[0] == '{' && has("load_summary") && has("successes"):
		return FromInferencePerf, nil // a stage or run summary: readInferencePerf refuses it
	case has("aggregated_metrics") && has("individual_request_metrics"):
		return FromGenAIBench, nil
	case has("benchmark_version") && has("traffic_scenario"):
		return FromGenAIBench, nil // experiment_metadata.json: readGenAIBench refuses it
	case text[0] == '[' && has("mean_ttft_ms", "ttfts"):
		return "", fmt.Errorf("%s: a list of vLLM results (a vllm bench sweep summary.json): import the sweep directory, or its run=N.json files", name)
	case has("metadata") && has("metrics") && has("x_request_id", "credit_phase", "benchmark_phase"):
		return FromAIPerf, nil
	case has("aiperf_version") || (has("records") && has("input_config")):
		return FromAIPerf, nil
	case has("benchmarks") && has("guidellm_version", "generative_benchmark"):
		return FromGuideLLM, nil
	case has("server_info", "mean_e2e_latency_ms", "total_output_tokens_retokenized"):
		return FromSGLang, nil
	case has("ttfts") || (has("mean_ttft_ms") && has("duration")):
		return FromVLLM, nil
	}
	first := string(text)
	if i := strings.IndexByte(first, '\n'); i > 0 {
		first = first[:i]
	}
	return "", fmt.Errorf("%s: %w: JSON without the keys of vLLM (ttfts, mean_ttft_ms), SGLang (server_info, mean_e2e_latency_ms), AIPerf (metadata+metrics, aiperf_version) or guidellm (benchmarks, guidellm_version), llmperf (ttft_s, end_to_end_latency_s), inference-perf (start_time, end_time, info) or genai-bench (aggregated_metrics, individual_request_metrics): %.60s", name, ErrUnknownFormat, first)
}

// detectDir recognizes a results directory by the files in it: inference-perf's
// lifecycle reports, genai-bench's experiment_metadata.json. "" when neither.
func detectDir(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == ipPerRequest || n == ipSummary || ipStageFile.MatchString(n):
			return FromInferencePerf
		case n == genaiMetadata:
			return FromGenAIBench
		}
	}
	return ""
}
