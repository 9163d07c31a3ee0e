package main

import (
	"context"
	"fmt"
)

// runAnalyze is a placeholder until the analyze subcommand lands.
func runAnalyze(ctx context.Context, e env, args []string) int {
	fmt.Fprintln(e.stderr, "ceiling analyze: not implemented yet")
	return exitFailed
}
