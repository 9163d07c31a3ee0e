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

func detectContent(name string, start []byte) (string, error) {
	if bytes.HasPrefix(start, []byte("PAR1")) {
		return "", fmt.Errorf("%s: %w (a Parquet file)", name, ErrUnknownFormat)
	}
	h := head(bytes.TrimSpace(start))
	for _, t := range toolsByDetection() {
		ok, err := t.detect(h)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if ok {
			return t.name, nil
		}
	}
	if !h.isJSON() {
		return "", fmt.Errorf("%s: %w (not JSON)", name, ErrUnknownFormat)
	}
	first := string(h)
	if i := strings.IndexByte(first, '\n'); i > 0 {
		first = first[:i]
	}
	return "", fmt.Errorf("%s: %w: JSON without the keys of vLLM (ttfts, mean_ttft_ms), SGLang (server_info, mean_e2e_latency_ms), AIPerf (metadata+metrics, aiperf_version) or guidellm (benchmarks, guidellm_version), llmperf (ttft_s, end_to_end_latency_s), inference-perf (start_time, end_time, info) or genai-bench (aggregated_metrics, individual_request_metrics): %.60s", name, ErrUnknownFormat, first)
}

// detectDir recognizes a results directory by the files in it (inference-perf's
// lifecycle reports, genai-bench's experiment_metadata.json: the first file, by
// name, that marks a tool's directory decides), else as a whole (a vllm bench
// sweep's points). "" when no tool's.
func detectDir(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	ts := toolsByDetection()
	for _, e := range entries {
		for _, t := range ts {
			if t.dirEntry != nil && t.dirEntry(e.Name()) {
				return t.name
			}
		}
	}
	for _, t := range ts {
		if t.dir != nil && t.dir(dir) {
			return t.name
		}
	}
	return ""
}
