package main

import (
	"context"
	"fmt"
)

// runReport is a placeholder until the report subcommand lands.
func runReport(ctx context.Context, e env, args []string) int {
	fmt.Fprintln(e.stderr, "ceiling report: not implemented yet")
	return exitFailed
}
