package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// runCLI runs ceiling in-process with captured output and the process environment.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code = run(ctx, env{stdin: strings.NewReader(""), stdout: &o, stderr: &e, getenv: os.Getenv}, args)
	return code, o.String(), e.String()
}

// ceiling runs one subcommand in-process, fails the test unless it exits 0, and
// returns its standard output.
func ceiling(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("ceiling %s: exit %d\nstderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}
