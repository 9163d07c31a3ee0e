// Command ceiling finds the realistic concurrency ceiling of an LLM deployment:
// it records a concurrency sweep against an OpenAI-compatible server into Parquet,
// analyzes the throughput curve against the KV-cache budget, and writes a standalone
// HTML report.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is the tool version written into every trace; set with -ldflags at release.
var version = "0.1.0-dev"

// Exit codes shared by every subcommand.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	// exitInterrupted is 128 + SIGINT, as shells report a command stopped by Ctrl-C.
	exitInterrupted = 130
)

// env is what a subcommand may touch of the outside world, so that tests can run
// subcommands in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// isTerminal reports whether stderr is a terminal (live progress lines).
	isTerminal bool
	// abort is closed on a second interrupt (the first cancels the context).
	abort <-chan struct{}
}

type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) int
}

func subcommands() []subcommand {
	return []subcommand{
		{"record", "record a concurrency sweep against an OpenAI-compatible server into Parquet", runRecord},
		{"merge", "join the traces of the shards of one sweep (record --shard) into one run", runMerge},
		{"import", "turn the results of vLLM, SGLang, AIPerf, guidellm, llmperf, inference-perf or genai-bench (or a planner's predictions) into a run", runImport},
		{"analyze", "per-level statistics, capacity model, fits and the realistic ceiling", runAnalyze},
		{"report", "write a standalone HTML report of one or more runs", runReport},
		{"compare", "tell whether a candidate run differs from a baseline beyond noise; exit 1 on a regression (CI)", runCompare},
		{"plan", "print the KV/memory budget and propose sweep levels before recording", runPlan},
		{"whatif", "predict a measured run at other lengths, KV dtype, GPU count, shape or GPU", runWhatIf},
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `ceiling finds the realistic concurrency ceiling of an LLM deployment.

Usage:
  ceiling <command> [flags]

Commands:
`)
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Example:
  ceiling plan --model-config samples/models/llama-3.1-8b.json --gpu h100-sxm --gpus 1 --tp 1
  ceiling record --url http://127.0.0.1:8000 --concurrency 1,2,4,8,16,32 -o run.parquet
  ceiling analyze run.parquet
  ceiling report run.parquet -o report.html
  ceiling report vllm-results/*.json -o review.html   # other benchmarks' results, read directly

Run 'ceiling <command> --help' or 'ceiling help <command>' for the flags of a command.
`)
}

func main() {
	ctx, abort := interrupts()
	fi, _ := os.Stderr.Stat()
	e := env{
		abort:      abort,
		stdin:      os.Stdin,
		stdout:     os.Stdout,
		stderr:     os.Stderr,
		getenv:     os.Getenv,
		isTerminal: fi != nil && fi.Mode()&os.ModeCharDevice != 0,
	}
	os.Exit(run(ctx, e, os.Args[1:]))
}

// interrupts turns the first Ctrl-C (or SIGTERM) into a cancelled context, an
// orderly stop, and the second into a closed abort channel: stop now. A third gets
// the default action, so a stuck process can always be killed from the keyboard.
func interrupts() (context.Context, <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	abort := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		close(abort)
		signal.Reset(os.Interrupt, syscall.SIGTERM)
	}()
	return ctx, abort
}

func run(ctx context.Context, e env, args []string) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "help":
		if len(args) > 1 {
			// `ceiling help analyze` is `ceiling analyze --help`.
			for _, c := range subcommands() {
				if c.name == args[1] {
					return c.run(ctx, e, []string{"--help"})
				}
			}
			fmt.Fprintf(e.stderr, "ceiling help: unknown command %q\n\n", args[1])
			usage(e.stderr)
			return exitUsage
		}
		usage(e.stdout)
		return exitOK
	case "-h", "--help":
		usage(e.stdout)
		return exitOK
	case "--version", "version":
		fmt.Fprintln(e.stdout, "ceiling", version)
		return exitOK
	}
	for _, c := range subcommands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "ceiling: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}
