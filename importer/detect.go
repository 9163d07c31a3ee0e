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
		if _, err := sweepPoints(path); err == nil {
			return FromVLLMSweep, nil
		}
		return "", fmt.Errorf("%s: %w (a directory without vllm bench sweep points)", path, ErrUnknownFormat)
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
	if len(text) == 0 || (text[0] != '{' && text[0] != '[') {
		return "", fmt.Errorf("%s: %w (not JSON)", name, ErrUnknownFormat)
	}
	switch {
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
	return "", fmt.Errorf("%s: %w: JSON without the keys of vLLM (ttfts, mean_ttft_ms), SGLang (server_info, mean_e2e_latency_ms), AIPerf (metadata+metrics, aiperf_version) or guidellm (benchmarks, guidellm_version): %.60s", name, ErrUnknownFormat, first)
}
