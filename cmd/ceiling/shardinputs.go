package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/safetext"
	"github.com/ceiling-llm/ceiling/shard"
)

// Shard traces given to analyze or report directly: the traces of two or more
// shards of one sweep (the same run id, ceiling record --shard I/N) are merged
// as `ceiling merge` would (shard.Merge; its findings printed and added to the
// run's warnings) and analyzed as one run; a single shard is analyzed as it is.

// shardGroups returns, for each run id given as two or more shard traces, the
// names of those traces in the order given; names that are not shard traces are
// left out. salvage is --ignore-corrupt (openTrace).
func shardGroups(names []string, salvage bool) (map[string][]string, error) {
	byRun := map[string][]string{}
	for _, name := range names {
		src, err := openTrace(name, salvage)
		if err != nil {
			return nil, err
		}
		if s := src.Info.Shard; s != nil && s.Count > 1 && len(src.Files) == 1 {
			byRun[src.Info.RunID] = append(byRun[src.Info.RunID], name)
		}
	}
	for id, g := range byRun {
		if len(g) < 2 {
			delete(byRun, id)
		}
	}
	return byRun, nil
}

// shardRunOf is the run id whose shard group holds name, "" for none.
func shardRunOf(groups map[string][]string, name string) string {
	for id, g := range groups {
		for _, n := range g {
			if n == name {
				return id
			}
		}
	}
	return ""
}

// analyzeShards merges the shard traces names in memory and analyzes the merged
// run; the merge's findings are printed to warn and are warnings of the run.
func analyzeShards(ctx context.Context, names []string, opt analyze.Options, warn io.Writer) ([]analyze.Run, error) {
	ins := make([]shard.Input, 0, len(names))
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		in, err := shard.Read(name)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
	}
	m, err := shard.Merge(ins)
	if err != nil {
		return nil, fmt.Errorf("merging the shards %s: %w", strings.Join(names, ", "), err)
	}
	for _, f := range m.Findings {
		fmt.Fprintf(warn, "warning: %s\n", safetext.Line(f.String()))
	}
	dir, err := os.MkdirTemp("", "ceiling-shards-")
	if err != nil {
		return nil, fmt.Errorf("merging the shards %s: %w", strings.Join(names, ", "), err)
	}
	defer os.RemoveAll(dir)
	merged := filepath.Join(dir, "merged.parquet")
	if err := m.Write(merged); err != nil {
		return nil, fmt.Errorf("merging the shards %s: %w", strings.Join(names, ", "), err)
	}
	runs, err := analyzeTrace(ctx, merged, opt)
	if err != nil {
		return nil, err
	}
	for i := range runs {
		runs[i].Source = fmt.Sprintf("%d shards merged: %s", len(names), strings.Join(names, ", "))
	}
	return runs, nil
}
