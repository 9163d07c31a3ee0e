package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// `vllm bench sweep serve` writes one directory per parameter point, named
// SERVE--k=v-k=v-BENCH--k=v-k=v, holding one run=N.json per repeat (each a vLLM
// result) and a summary.json that is the list of the runs. The serve parameters
// are only in the directory name (and as extra top-level keys of each run), so
// they are kept in the level label.

var runFile = regexp.MustCompile(`^run=(\d+)\.json$`)

// readVLLMSweep reads a sweep output directory, or one of its point directories.
func readVLLMSweep(dir string) (*Run, error) {
	points, err := sweepPoints(dir)
	if err != nil {
		return nil, err
	}
	run := &Run{Tool: FromVLLMSweep, Files: []string{dir}}
	serve := map[string]bool{}
	for _, p := range points {
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		var runs []string
		for _, e := range entries {
			if runFile.MatchString(e.Name()) {
				runs = append(runs, e.Name())
			}
		}
		sort.Slice(runs, func(i, j int) bool { return runNumber(runs[i]) < runNumber(runs[j]) })
		if len(runs) == 0 {
			return nil, fmt.Errorf("%s: no run=N.json in the sweep point directory", p)
		}
		params := strings.ReplaceAll(strings.ReplaceAll(filepath.Base(p), "SERVE--", ""), "BENCH--", "")
		serve[serveParams(filepath.Base(p))] = true
		for _, name := range runs {
			objs, err := readObjects(filepath.Join(p, name))
			if err != nil {
				return nil, err
			}
			for _, o := range objs {
				o.where = filepath.Base(p) + "/" + name
				label := params + " " + strings.TrimSuffix(name, ".json")
				if err := addBenchLevel(run, o, vllmKeys, label); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(serve) > 1 {
		run.Warnings = appendNew(run.Warnings, fmt.Sprintf("the sweep varies the server's parameters (%d serve configurations): levels of different configurations are different deployments", len(serve)))
	}
	run.Warnings = appendNew(run.Warnings, "each run=N.json of a sweep point is a repeat of the same point and is imported as its own level")
	run.Missing = appendNew(run.Missing,
		"the benchmark's version (vLLM result files do not record it)",
		"per-request end time (rebuilt exactly as ttft + sum(itls))")
	return run, nil
}

func runNumber(name string) int {
	m := runFile.FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// serveParams is the SERVE-- part of a point directory's name.
func serveParams(name string) string {
	s, _, _ := strings.Cut(name, "BENCH--")
	return s
}

// sweepPoints lists the point directories of dir: dir itself when it holds
// run=N.json files, else its subdirectories that do.
func sweepPoints(dir string) ([]string, error) {
	if hasRunFiles(dir) {
		return []string{dir}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var points []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() && hasRunFiles(p) {
			points = append(points, p)
		}
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("%s: not a vllm bench sweep directory (no subdirectory holds run=N.json)", dir)
	}
	sort.Strings(points)
	return points, nil
}

func hasRunFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && runFile.MatchString(e.Name()) {
			return true
		}
	}
	return false
}

// FromVLLMSweep is vLLM's vllm bench sweep.
const FromVLLMSweep = "vllm-sweep"

// vllmSweepTool is vllm bench sweep: a directory of run=N.json points. Its
// summary.json, a list of the points' results, is refused with what to import.
func vllmSweepTool() tool {
	return tool{
		name:       FromVLLMSweep,
		detectRank: 60,
		detect: func(h head) (bool, error) {
			if h.isList() && h.has("mean_ttft_ms", "ttfts") {
				return false, errors.New("a list of vLLM results (a vllm bench sweep summary.json): import the sweep directory, or its run=N.json files")
			}
			return false, nil
		},
		dir: func(path string) bool {
			_, err := sweepPoints(path)
			return err == nil
		},
		read: readVLLMSweep,
		note: wholeDurationNote,
	}
}
