package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ceiling-llm/ceiling/shard"
	"github.com/ceiling-llm/ceiling/trace"
	"github.com/spf13/pflag"
)

const mergeHead = `Usage: ceiling merge SHARD.parquet ... -o run.parquet

Joins the traces of the shards of one sweep (ceiling record --shard I/N, for
example the pods of a Kubernetes Indexed Job) into one run: the rows of each level
united, the levels' times spanning all shards, the server's metrics from the one
shard that scraped them. It refuses traces of different runs, plans or servers,
and a missing or repeated shard. It checks that the shards ran each level
together and names a shard that started late, kept fewer of its workers busy
than its share, or whose window hardly overlapped the others'; these findings
are printed and stored as warnings of the merged run, and the analysis judges
the merged level against its whole concurrency. Times are moved onto the
server's clock when every shard measured its offset.
`

const mergeExample = `Example:
  ceiling merge run-0.parquet run-1.parquet run-2.parquet -o run.parquet
  ceiling merge 'traces/sweep-1-shard-*.parquet' -o sweep-1.parquet   # the pattern is expanded by ceiling
  ceiling analyze run.parquet
`

// runMerge implements `ceiling merge`.
func runMerge(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	out := fs.StringP("output", "o", "", "write the merged trace to this file (required)")
	force := fs.Bool("force", false, "replace an existing -o FILE and its metrics sidecar")
	h := help{name: "merge", head: mergeHead, example: mergeExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return h.usageError(e, "no shard trace given")
	}
	if *out == "" {
		return h.usageError(e, "-o must name the merged trace to write")
	}
	names, err := expandShards(fs.Args())
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %v\n", err)
		return exitFailed
	}
	for _, in := range names {
		if sameFile(in, *out) || sameFile(trace.MetricsPath(in), *out) {
			return h.usageError(e, fmt.Sprintf("-o %s is one of the inputs: write the merged run to another file", *out))
		}
	}
	if _, err := os.Lstat(*out); err == nil && !*force {
		fmt.Fprintf(e.stderr, "ceiling merge: %s exists: pass --force to replace it, or choose another -o\n", *out)
		return exitFailed
	}
	var ins []shard.Input
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return exitInterrupted
		}
		in, err := shard.Read(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "ceiling merge: %v\n", err)
			return exitFailed
		}
		ins = append(ins, in)
	}
	m, err := shard.Merge(ins)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %v\n", err)
		return exitFailed
	}
	for _, f := range m.Findings {
		fmt.Fprintf(e.stderr, "warning: %s\n", f)
	}
	if err := m.Write(*out); err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "wrote %s: %d shards, %d levels, %d rows, %d findings\n", *out, len(ins), len(m.Info.Levels), len(m.Rows), len(m.Findings))
	return exitOK
}

// expandShards expands a pattern such as run-shard-*.parquet that names no file
// itself (in a container without a shell nothing else would), leaving out the
// metrics sidecars, which are read beside their traces.
func expandShards(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if _, err := os.Lstat(a); err == nil || !strings.ContainsAny(a, "*?[") {
			out = append(out, a)
			continue
		}
		matches, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", a, err)
		}
		n := 0
		for _, m := range matches {
			if !strings.HasSuffix(m, ".metrics.parquet") {
				out = append(out, m)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s matches no shard trace", a)
		}
	}
	return out, nil
}

// sameFile reports whether a and b name one existing file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
