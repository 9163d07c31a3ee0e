package main

import (
	"context"
	"fmt"
)

// runPlan is a placeholder until the plan subcommand lands.
func runPlan(ctx context.Context, e env, args []string) int {
	fmt.Fprintln(e.stderr, "ceiling plan: not implemented yet")
	return exitFailed
}
