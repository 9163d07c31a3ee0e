package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/trace"
)

// Parallel load generators of another tool (llm-d-benchmark -j N writes one
// result file per harness pod). No public set of such files was found, so the
// tests derive one from a real file of ../shared/peer-results: its per-request
// records are dealt round-robin into n files, each one generator's share, as n
// pods of one profile would have written them; each file's load setting is its
// share of the original's (max_concurrency, AIPerf's concurrency). Merged again,
// the n files must give back the original run: the same requests, the same
// latency percentiles, the same throughput.

// decodeJSON decodes data keeping numbers exact (epoch nanoseconds overflow a
// float64's 53 bits).
func decodeJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var o map[string]any
	if err := d.Decode(&o); err != nil {
		t.Fatal(err)
	}
	return o
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// splitVLLM deals the per-request arrays of a vLLM result (every list as long as
// ttfts) into n files; edit may change file i afterwards.
func splitVLLM(t *testing.T, src string, n int, edit func(i int, o map[string]any)) []string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	orig := decodeJSON(t, data)
	reqs := len(orig["ttfts"].([]any))
	dir := t.TempDir()
	var files []string
	for i := range n {
		o := map[string]any{}
		for k, v := range orig {
			if l, ok := v.([]any); ok && len(l) == reqs {
				var part []any
				for j := i; j < reqs; j += n {
					part = append(part, l[j])
				}
				v = part
			}
			o[k] = v
		}
		if c, ok := orig["max_concurrency"].(json.Number); ok {
			ci, _ := c.Int64()
			o["max_concurrency"] = int(ci) / n
		}
		// Without a cap vLLM sends every request at once: a generator's level is
		// its own request count, not the original's measured peak.
		delete(o, "max_concurrent_requests")
		if edit != nil {
			edit(i, o)
		}
		f := filepath.Join(dir, fmt.Sprintf("pod-%d.json", i+1))
		writeJSON(t, f, o)
		files = append(files, f)
	}
	return files
}

// splitAIPerf deals the records of an AIPerf profile_export.jsonl into n files,
// each with the summary beside it set to its share of the concurrency; shiftNs
// moves file i's timestamps (every metadata *_ns field) later.
func splitAIPerf(t *testing.T, src string, n int, shiftNs func(i int) int64) []string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
	}
	sumData, err := os.ReadFile(strings.TrimSuffix(src, ".jsonl") + "_aiperf.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	for i := range n {
		var out bytes.Buffer
		for j := i; j < len(lines); j += n {
			rec := decodeJSON(t, lines[j])
			if shiftNs != nil && shiftNs(i) != 0 {
				md := rec["metadata"].(map[string]any)
				for k, v := range md {
					if num, ok := v.(json.Number); ok && strings.HasSuffix(k, "_ns") {
						x, err := num.Int64()
						if err != nil {
							t.Fatal(err)
						}
						md[k] = x + shiftNs(i)
					}
				}
			}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(append(b, '\n'))
		}
		pod := filepath.Join(dir, fmt.Sprintf("pod-%d", i+1))
		if err := os.MkdirAll(pod, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(pod, "profile_export.jsonl")
		if err := os.WriteFile(f, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := decodeJSON(t, sumData)
		lg := sum["input_config"].(map[string]any)["loadgen"].(map[string]any)
		c, _ := lg["concurrency"].(json.Number).Int64()
		lg["concurrency"] = int(c) / n
		writeJSON(t, filepath.Join(pod, "profile_export_aiperf.json"), sum)
		files = append(files, f)
	}
	return files
}

// mergeFiles runs ceiling merge on files; it returns the merged trace, the exit
// code and what merge printed.
func mergeFiles(t *testing.T, files ...string) (string, int, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "merged.parquet")
	code, _, stderr := runCLI(append(append([]string{"merge"}, files...), "-o", out)...)
	return out, code, stderr
}

// TestMergeParallelGenerators merges n files derived from one real result of
// each kind of timing a tool saves, and checks the merged run against the
// original file's own analysis.
func TestMergeParallelGenerators(t *testing.T) {
	aurotripathy := filepath.Join(peerDir(t), "aurotripathy-vllm-bench-h100-fp16-llama31-8b-in1024-out512-c004.json")
	maty := filepath.Join(peerDir(t), "maty0609-vllm-benchmarks-qwen35-27b-rtx3090-20260324.json")
	aiperf := filepath.Join(peerDir(t), "other-tools", "aiperf", "ai-dynamo-aiperf-examples-run1-profile_export.jsonl")
	for _, c := range []struct {
		name     string
		original string
		files    func(t *testing.T) []string
		n        int
		wantConc int
		// unverified: the files cannot show the generators ran together.
		unverified bool
	}{
		// vLLM before 0.19 saves no send times: relative timing.
		{"vllm no send times", aurotripathy, func(t *testing.T) []string { return splitVLLM(t, aurotripathy, 2, nil) }, 2, 4, true},
		// vLLM 0.18's start_times are perf_counter offsets, each from its own origin.
		{"vllm start_times offsets", maty, func(t *testing.T) []string { return splitVLLM(t, maty, 2, nil) }, 2, 100, true},
		// AIPerf's records carry epoch nanoseconds: the windows are compared.
		{"aiperf epoch timestamps", aiperf, func(t *testing.T) []string { return splitAIPerf(t, aiperf, 4, nil) }, 4, 100, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := c.files(t)
			merged, code, stderr := mergeFiles(t, files...)
			if code != 0 {
				t.Fatalf("merge exited %d: %s", code, stderr)
			}
			info, rows, err := trace.ReadFile(merged)
			if err != nil {
				t.Fatal(err)
			}
			_, origRows, err := trace.ReadFile(importedTrace(t, c.original))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(origRows) {
				t.Errorf("%d merged rows, the original has %d", len(rows), len(origRows))
			}
			if info.Shard == nil || len(info.Shard.Merged) != c.n || info.Source == nil || len(info.Source.Files) < c.n {
				t.Errorf("merged run does not list its %d generators: shard %+v, source %+v", c.n, info.Shard, info.Source)
			}
			if len(info.Levels) != 1 || info.Levels[0].Concurrency != c.wantConc {
				t.Fatalf("merged levels %+v; want one level of concurrency %d (the generators' sum)", info.Levels, c.wantConc)
			}
			ids := map[int64]bool{}
			for _, r := range rows {
				if ids[r.RequestID] {
					t.Fatalf("request id %d twice in the merged rows", r.RequestID)
				}
				ids[r.RequestID] = true
				if int(r.Concurrency) != c.wantConc {
					t.Fatalf("row %d carries concurrency %d, want the merged level's %d", r.RequestID, r.Concurrency, c.wantConc)
				}
			}
			m, o := analyzeJSON(t, merged), analyzeJSON(t, c.original)
			warned := strings.Contains(strings.Join(m.Warnings, "\n"), "merge: co-loading could not be verified")
			if warned != c.unverified {
				t.Errorf("analysis warns co-loading unverified: %v, want %v; warnings:\n%s", warned, c.unverified, strings.Join(m.Warnings, "\n"))
			}
			if strings.Contains(stderr, "after the first generator") || strings.Contains(stderr, "ran together for only") || strings.Contains(stderr, "s, the longest generator") {
				t.Errorf("generators dealt from one run are named late or apart:\n%s", stderr)
			}
			ml, ol := m.Levels[0], o.Levels[0]
			for _, q := range []struct {
				name string
				m, o analyze.Summary
			}{{"TTFT", ml.TTFT, ol.TTFT}, {"TPOT", ml.TPOT, ol.TPOT}, {"E2E", ml.E2E, ol.E2E}} {
				for _, p := range []struct {
					name string
					m, o *float64
				}{{"p50", q.m.P50, q.o.P50}, {"p99", q.m.P99, q.o.P99}} {
					if got, want := deref(p.m), deref(p.o); math.Abs(got-want) > 1e-9*math.Abs(want) {
						t.Errorf("%s %s: merged %.9f s, the original %.9f s", q.name, p.name, got, want)
					}
				}
			}
			// Offsets are counted from each file's own first send, so the merged
			// window may move by the gap between the generators' first sends.
			if d := math.Abs(ml.OutputTokS-ol.OutputTokS) / ol.OutputTokS; d > 0.01 {
				t.Errorf("merged %.2f output tok/s, the original %.2f (%.2f%% apart)", ml.OutputTokS, ol.OutputTokS, 100*d)
			}
		})
	}
}

// importedTrace imports a real file as it is, for the row count.
func importedTrace(t *testing.T, file string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "original.parquet")
	ceiling(t, "import", file, "-o", out)
	return out
}

// TestMergeGeneratorsNamesLateFile: a generator whose records start 5 s after
// the others' is named by its file (absolute times); one that ran half as long
// as the others is named where the files hold no send times.
func TestMergeGeneratorsNamesLateFile(t *testing.T) {
	aiperf := filepath.Join(peerDir(t), "other-tools", "aiperf", "ai-dynamo-aiperf-examples-run1-profile_export.jsonl")
	vllm := filepath.Join(peerDir(t), "aurotripathy-vllm-bench-h100-fp16-llama31-8b-in1024-out512-c004.json")
	for _, c := range []struct {
		name  string
		files func(t *testing.T) []string
		late  int // the file's index
		want  string
	}{
		{"aiperf started 5 s late", func(t *testing.T) []string {
			return splitAIPerf(t, aiperf, 2, func(i int) int64 { return int64(i) * 5e9 })
		}, 1, "started 5.0 s after the first generator"},
		{"vllm ran half as long", func(t *testing.T) []string {
			return splitVLLM(t, vllm, 2, func(i int, o map[string]any) {
				if i == 0 {
					d, _ := o["duration"].(json.Number).Float64()
					o["duration"] = d / 2
				}
			})
		}, 0, "ran 72.4 s, the longest generator 144.9 s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := c.files(t)
			merged, code, stderr := mergeFiles(t, files...)
			if code != 0 {
				t.Fatalf("merge exited %d: %s", code, stderr)
			}
			named := fmt.Sprintf("level 0: generator %d (%s) %s", c.late, files[c.late], c.want)
			if !strings.Contains(stderr, named) {
				t.Errorf("merge does not say %q:\n%s", named, stderr)
			}
			if w := strings.Join(analyzeJSON(t, merged).Warnings, "\n"); !strings.Contains(w, "merge: "+named) {
				t.Errorf("the analysis of the merged run does not carry %q:\n%s", named, w)
			}
			for i, f := range files {
				if i != c.late && strings.Contains(stderr, fmt.Sprintf("generator %d (%s) %s", i, f, strings.Fields(c.want)[0])) {
					t.Errorf("generator %d is named too:\n%s", i, stderr)
				}
			}
		})
	}
}

// TestMergeGeneratorsRefuses: files that are not one profile's parallel
// generators are refused, naming the file and the field that differs.
func TestMergeGeneratorsRefuses(t *testing.T) {
	vllm := filepath.Join(peerDir(t), "aurotripathy-vllm-bench-h100-fp16-llama31-8b-in1024-out512-c004.json")
	aiperf := filepath.Join(peerDir(t), "other-tools", "aiperf", "ai-dynamo-aiperf-examples-run1-profile_export.jsonl")
	summaryOnly := filepath.Join(peerDir(t), "other-tools", "vllm", "er0080-opt125m-v0.25.1-c2-summaryonly.json")
	editSecond := func(edit func(o map[string]any)) func(t *testing.T) []string {
		return func(t *testing.T) []string {
			return splitVLLM(t, vllm, 2, func(i int, o map[string]any) {
				if i == 1 {
					edit(o)
				}
			})
		}
	}
	for _, c := range []struct {
		name  string
		files func(t *testing.T) []string
		want  []string // {the file's index as "#i", the words}; #i is replaced by its name
	}{
		{"another model", editSecond(func(o map[string]any) { o["model_id"] = "other/model" }),
			[]string{"#1", `has model "other/model" but`, "#0"}},
		{"other levels", editSecond(func(o map[string]any) { o["max_concurrency"] = 3 }),
			[]string{"#1", "has levels concurrency 3 but", "#0", "has concurrency 2"}},
		{"another workload", editSecond(func(o map[string]any) {
			outs := o["output_lens"].([]any)
			for i := range outs {
				outs[i] = 128
			}
		}), []string{"#1", "has mean output tokens 128 but", "has 512"}},
		{"another tool", func(t *testing.T) []string {
			return []string{splitVLLM(t, vllm, 2, nil)[0], splitAIPerf(t, aiperf, 2, nil)[0]}
		}, []string{"#1", "has tool aiperf but", "#0", "has vllm"}},
		{"one file", func(t *testing.T) []string { return splitVLLM(t, vllm, 2, nil)[:1] },
			[]string{"needs the files of two or more load generators", "#0"}},
		{"summary only", func(t *testing.T) []string { return []string{summaryOnly, summaryOnly} },
			[]string{"per-request data is needed"}},
		{"a ceiling trace among them", func(t *testing.T) []string {
			files := splitVLLM(t, vllm, 2, nil)
			return []string{files[0], importedTrace(t, files[1])}
		}, []string{"#0", "is another tool's result but", "#1", "is not"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := c.files(t)
			_, code, stderr := mergeFiles(t, files...)
			if code != exitFailed {
				t.Fatalf("merge exited %d, want %d (refused): %s", code, exitFailed, stderr)
			}
			for _, w := range c.want {
				if strings.HasPrefix(w, "#") {
					var i int
					fmt.Sscanf(w, "#%d", &i)
					w = files[i]
				}
				if !strings.Contains(stderr, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "panic") {
				t.Errorf("merge panicked:\n%s", stderr)
			}
		})
	}
}

// TestMergeGeneratorsDocExample runs the docs/sharding.md example of two
// llm-d-benchmark pods' vLLM results on two files dealt from a real result, and
// checks the output lines the page shows.
func TestMergeGeneratorsDocExample(t *testing.T) {
	var block *docBlock
	for _, b := range docBlocks(t, "../../docs/sharding.md") {
		if strings.Contains(b.marker, "TestMergeGeneratorsDocExample") {
			block = &b
		}
	}
	if block == nil || len(block.commands) != 2 {
		t.Fatalf("docs/sharding.md has no example marked for this test with its two commands: %+v", block)
	}
	files := splitVLLM(t, filepath.Join(peerDir(t), "aurotripathy-vllm-bench-h100-fp16-llama31-8b-in1024-out512-c004.json"), 2, nil)
	dir := t.TempDir()
	for _, name := range block.commands[0][2:4] {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range block.commands[0][2:4] {
		data, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var printed strings.Builder
	for _, words := range block.commands {
		code, stdout, stderr := runCLI(words[1:]...)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s", strings.Join(words, " "), code, stderr)
		}
		printed.WriteString(stdout + stderr)
	}
	got := strings.Split(printed.String(), "\n")
	for _, want := range block.output {
		if strings.TrimSpace(want) != "..." && strings.TrimSpace(want) != "" && !printedLine(got, want) {
			t.Errorf("the page shows %q, which the commands no longer print:\n%s", want, printed.String())
		}
	}
}
