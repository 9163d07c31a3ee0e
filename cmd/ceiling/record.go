package main

import (
	"context"
	"fmt"
)

// runRecord is a placeholder until the record subcommand lands.
func runRecord(ctx context.Context, e env, args []string) int {
	fmt.Fprintln(e.stderr, "ceiling record: not implemented yet")
	return exitFailed
}
