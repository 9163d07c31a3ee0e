package importer

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/trace"
)

// This file is the one place that knows the trace format: it maps a Run onto
// trace rows and run metadata and writes them.

// WriteOptions say what the written trace records about the importer.
type WriteOptions struct {
	RunID   string // "" = from the first file's name
	Version string // ceiling's version
}

// WriteFile writes run as one ceiling trace at path.
func WriteFile(path string, run *Run, opt WriteOptions) error {
	info, rows := toTrace(run, opt)
	if err := trace.WriteFile(path, info, rows); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// RunID is the run id an import gets unless one is given: the tool and the first
// file's name.
func RunID(run *Run) string {
	if len(run.Files) == 0 {
		return run.Tool
	}
	base := filepath.Base(run.Files[0])
	base = strings.TrimSuffix(base, filepath.Ext(base))
	return run.Tool + ":" + base
}

func toTrace(run *Run, opt WriteOptions) (trace.RunInfo, []trace.Row) {
	id := opt.RunID
	if id == "" {
		id = RunID(run)
	}
	info := trace.RunInfo{
		Tool: "ceiling import", Version: opt.Version, RunID: id, Started: run.Started,
		Target: trace.Target{BaseURL: run.BaseURL, Endpoint: run.Endpoint, Model: run.Model},
		Server: trace.ServerInfo{Kind: run.ServerKind, Version: run.ServerVer},
		Source: &trace.SourceInfo{Tool: run.Tool, Version: run.ToolVersion, Files: run.Files,
			Missing: run.Missing, Warnings: run.Warnings},
		Workload: "imported from " + run.Tool,
	}
	if info.Server.Kind == "" {
		info.Server.Kind = engine.Unknown
	}
	info.Plan.Mode = "closed"
	var rows []trace.Row
	var reqID int64
	for li, lv := range run.Levels {
		if lv.Rate > 0 {
			info.Plan.Mode = "open"
			info.Plan.Rates = append(info.Plan.Rates, lv.Rate)
		} else {
			info.Plan.Concurrency = append(info.Plan.Concurrency, lv.Concurrency)
		}
		meta := trace.LevelInfo{Level: li, Concurrency: lv.Concurrency, Rate: lv.Rate, Started: lv.Started,
			Requests: len(lv.Requests), Label: lv.Label, SourceDurationS: lv.DurationS}
		if lv.Relative {
			meta.Timing = "relative"
		}
		meta.References = append(meta.References, lv.References...)
		for _, r := range lv.Requests {
			reqID++
			row := trace.Row{
				RunID: id, Level: int32(li), Concurrency: int32(lv.Concurrency), Rate: lv.Rate,
				RequestID: reqID, Worker: int32(r.Worker), Warmup: r.Warmup,
				ScheduledNs: r.SentNs, SentNs: r.SentNs, EndNs: r.SentNs + endOffsetNs(&r),
				PromptTokens: int32Ptr(r.Prompt), OutputTokens: int32Ptr(r.Output), ReasoningTokens: int32Ptr(r.Reasoning),
				TokensSource: "usage", Status: int32(r.Status),
			}
			if r.Output == nil {
				row.TokensSource = "chunks"
			}
			if r.Err != "" {
				row.Error = ptrTo(r.Err)
				meta.Errors++
			}
			if r.TTFT != nil {
				ft := r.SentNs + secondsToNs(*r.TTFT)
				row.FirstTokenNs = &ft
				row.ChunkGapsUs = make([]int32, len(r.Gaps))
				for k, g := range r.Gaps {
					row.ChunkGapsUs[k] = int32(min(math.Round(g*1e6), math.MaxInt32))
				}
			}
			rows = append(rows, row)
		}
		info.Levels = append(info.Levels, meta)
	}
	return info, rows
}

func int32Ptr(v *int) *int32 {
	if v == nil {
		return nil
	}
	x := int32(*v)
	return &x
}

// Image is run as the bytes of one ceiling trace file, never written to disk: what
// `ceiling analyze` and `report` read through trace.OpenImage.
func Image(run *Run, opt WriteOptions) ([]byte, error) {
	info, rows := toTrace(run, opt)
	var buf bytes.Buffer
	if err := trace.Write(&buf, info, rows); err != nil {
		return nil, fmt.Errorf("importing %s: %w", run.Files[0], err)
	}
	return buf.Bytes(), nil
}

// ToTrace is run as the run metadata and rows WriteFile would write, for callers
// that combine imported runs before writing (ceiling merge of several load
// generators' files).
func ToTrace(run *Run, opt WriteOptions) (trace.RunInfo, []trace.Row) {
	return toTrace(run, opt)
}
