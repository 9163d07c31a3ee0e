// Package sharedtest finds the real data the tests read from ../shared, the folder of
// real servers' results and captures that sits beside the repository (never in it).
//
// On a fresh clone the folder is absent: a test that needs it is skipped with a
// message saying what is missing and where it was looked for, except under CI=true,
// where the test fails, because CI must prove the real data still reads.
package sharedtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Dir is the absolute path of ../shared/name beside the repository root (the
// directory of go.mod above the working directory). When it is not a readable
// directory, t is skipped with a message, or failed under CI=true.
func Dir(t testing.TB, name string) string {
	t.Helper()
	dir, err := Find(name)
	if err != nil {
		missing(t, err)
	}
	return dir
}

// Find is Dir for data a test can do without (a fuzz seed corpus): the directory,
// or why it is not there.
func Find(name string) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(root), "shared", name)
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("shared test data %s not found at %s (link or copy the shared folder beside the repository): %w", name, dir, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("shared test data %s at %s is not a directory", name, dir)
	}
	return dir, nil
}

// missing skips t outside CI and fails it under CI=true.
func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true needs the shared test data: %v", err)
	}
	t.Skipf("skipped: %v", err)
}

// repoRoot is the directory of go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}
