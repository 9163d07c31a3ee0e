package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ceiling-llm/ceiling/importer"
	"github.com/ceiling-llm/ceiling/internal/atomicfile"
	"github.com/ceiling-llm/ceiling/internal/safetext"
	"github.com/ceiling-llm/ceiling/shard"
	"github.com/ceiling-llm/ceiling/trace"
	"github.com/spf13/pflag"
)

const mergeHead = `Usage: ceiling merge SHARD.parquet ... -o run.parquet
       ceiling merge RESULT ... -o run.parquet   (another tool's parallel generators)

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

Given the result files of another tool's load generators that ran at the same
time (llm-d-benchmark -j N: one file per harness pod), it imports each and
unites them level by level, the merged level's concurrency (or rate) the sum of
theirs. It refuses files of different tools, models, workloads or level sets.
Where the files hold absolute send times it names a generator that started late;
where they do not, it warns that co-loading could not be verified.
`

const mergeExample = `Example:
  ceiling merge run-0.parquet run-1.parquet run-2.parquet -o run.parquet
  ceiling merge 'traces/sweep-1-shard-*.parquet' -o sweep-1.parquet   # the pattern is expanded by ceiling
  ceiling analyze run.parquet
  ceiling merge pod-1/profile_export.jsonl pod-2/profile_export.jsonl -o run.parquet   # AIPerf, 2 pods
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
		fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
		return exitFailed
	}
	for _, in := range names {
		if sameFile(in, *out) || sameFile(trace.MetricsPath(in), *out) {
			return h.usageError(e, fmt.Sprintf("-o %s is one of the inputs: write the merged run to another file", *out))
		}
	}
	if err := checkMergeOutput(*out, names, *force); err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
		return exitFailed
	}
	foreign, err := foreignInputs(names)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
		return exitFailed
	}
	if foreign {
		return mergeGenerators(ctx, e, names, *out)
	}
	var ins []shard.Input
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return exitInterrupted
		}
		in, err := shard.Read(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
			return exitFailed
		}
		ins = append(ins, in)
	}
	m, err := shard.Merge(ins)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
		return exitFailed
	}
	for _, f := range m.Findings {
		fmt.Fprintf(e.stderr, "warning: %s\n", safetext.Line(f.String()))
	}
	if err := m.Write(*out); err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "wrote %s: %d shards, %d levels, %d rows, %d findings\n", *out, len(ins), len(m.Info.Levels), len(m.Rows), len(m.Findings))
	return exitOK
}

// checkMergeOutput applies the rule every writer follows (atomicfile.Guard) to
// -o and to the metrics sidecar written beside it: never an input or its sidecar,
// never anything but a regular file (a FIFO, a device such as /dev/null, a
// symbolic link), even with --force; an existing file only with --force. The
// sidecar is the output's own, so --force is not needed to replace it.
func checkMergeOutput(out string, inputs []string, force bool) error {
	g := atomicfile.Guard{Force: force}
	for _, in := range inputs {
		g.Inputs = append(g.Inputs, in, trace.MetricsPath(in))
	}
	if err := guardError(g.Check(out)); err != nil {
		return err
	}
	g.Force = true
	return guardError(g.Check(trace.MetricsPath(out)))
}

// foreignInputs says whether names are other tools' result files (true) or
// ceiling traces (false), and refuses a mix of both.
func foreignInputs(names []string) (bool, error) {
	var trace, foreign string
	for _, name := range names {
		if _, err := os.Stat(name); err != nil {
			return false, fmt.Errorf("reading %s: %w", name, err)
		}
		_, err := importer.Detect(name)
		switch {
		case err == nil:
			foreign = cmp.Or(foreign, name)
		case errors.Is(err, importer.ErrUnknownFormat):
			trace = cmp.Or(trace, name)
		default:
			return false, err
		}
	}
	if trace != "" && foreign != "" {
		return false, fmt.Errorf("%s is another tool's result but %s is not: merge either ceiling's shard traces or the files of one tool's parallel load generators", foreign, trace)
	}
	return foreign != "", nil
}

// mergeGenerators imports each of names (one load generator's results each)
// and writes the run shard.MergeGenerators makes of them.
func mergeGenerators(ctx context.Context, e env, names []string, out string) int {
	runs, err := importer.ImportEach(ctx, names, importer.Options{})
	if err != nil {
		if ctx.Err() != nil {
			return exitInterrupted
		}
		fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
		return exitFailed
	}
	gens := make([]shard.Generator, len(runs))
	for i, r := range runs {
		info, rows := importer.ToTrace(r, importer.WriteOptions{Version: version})
		gens[i] = shard.Generator{Name: r.Files[0], Info: info, Rows: rows}
	}
	m, err := shard.MergeGenerators(gens)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
		return exitFailed
	}
	for _, f := range m.Findings {
		fmt.Fprintf(e.stderr, "warning: %s\n", safetext.Line(f.String()))
	}
	if err := m.Write(out); err != nil {
		fmt.Fprintf(e.stderr, "ceiling merge: %s\n", errText(err))
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "wrote %s: %d %s generators, %d levels, %d rows, %d findings\n", out, len(gens), m.Info.Source.Tool, len(m.Info.Levels), len(m.Rows), len(m.Findings))
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
