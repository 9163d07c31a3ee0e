package importer

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/engine"
)

// SGLang `python -m sglang.bench_serving --output-file F` appends one JSON object
// per run to F. With --output-details it adds the per-request arrays input_lens,
// output_lens, ttfts, itls and errors (seconds), named as in vLLM; without it the
// line is a summary only. Python writes an infinite request rate as the bare token
// Infinity, which the lenient decoder accepts. The embedded server_info (the
// server's arguments) gives the server version.

// readSGLang reads an SGLang bench_serving JSON Lines file.
func readSGLang(path string) (*Run, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, err
	}
	run := &Run{Tool: FromSGLang, Files: []string{path}, ServerKind: engine.SGLang}
	for _, o := range objs {
		if si, ok, err := o.obj("server_info"); err != nil {
			return nil, err
		} else if ok {
			if v, ok, _ := si.str("version"); ok {
				run.ToolVersion, run.ServerVer = v, v
			}
		}
		if b, ok, _ := o.str("backend"); ok && b != "sglang" && b != "sglang-oai" && b != "sglang-oai-chat" {
			run.ServerKind = ""
			run.Warnings = appendNew(run.Warnings, fmt.Sprintf("%s: SGLang's client measured a %q backend", o.where, b))
		}
		if err := addBenchLevel(run, o, sglangKeys, o.where); err != nil {
			return nil, err
		}
	}
	if run.ToolVersion == "" {
		run.Missing = appendNew(run.Missing, "the SGLang version (no server_info in the file)")
	}
	run.Missing = appendNew(run.Missing,
		"per-request end time (rebuilt exactly as ttft + sum(itls))",
		"time to first content chunk, finish reasons, reasoning tokens",
		"HTTP status of failed requests (only the error text)")
	return run, nil
}

// FromSGLang is SGLang's bench_serving, named after its engine like FromVLLM.
const FromSGLang = string(engine.SGLang)

// sglangTool is SGLang's bench_serving.
func sglangTool() tool {
	return tool{
		name:       FromSGLang,
		detectRank: 90,
		detect: func(h head) (bool, error) {
			return h.isJSON() && h.has("server_info", "mean_e2e_latency_ms", "total_output_tokens_retokenized"), nil
		},
		read: readSGLang,
		note: wholeDurationNote,
	}
}
