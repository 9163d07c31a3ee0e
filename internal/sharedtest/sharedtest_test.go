package sharedtest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// fakeTB records how a test ended: Skipf and Fatalf stop the goroutine, as the
// real ones do, so that Dir's return after them is never reached.
type fakeTB struct {
	testing.TB
	mu      sync.Mutex
	skipped string
	failed  string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.mu.Lock()
	f.skipped = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// run calls Dir on a fake TB in its own goroutine (Goexit ends only that one).
func run(name string) (dir string, f *fakeTB) {
	f = &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		dir = Dir(f, name)
	}()
	<-done
	return dir, f
}

// TestDirMissing: a missing shared folder skips with a message naming it outside
// CI and fails under CI=true; neither returns a path.
func TestDirMissing(t *testing.T) {
	const name = "no-such-shared-data-for-sharedtest"
	for _, tt := range []struct {
		ci         string
		skip, fail bool
	}{
		{"", true, false},
		{"false", true, false},
		{"true", false, true},
	} {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			dir, f := run(name)
			if dir != "" {
				t.Errorf("Dir returned %q for a missing folder", dir)
			}
			if (f.skipped != "") != tt.skip || (f.failed != "") != tt.fail {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", f.skipped, f.failed, tt.skip, tt.fail)
			}
			msg := f.skipped + f.failed
			if !strings.Contains(msg, name) || !strings.Contains(msg, filepath.Join("shared", name)) {
				t.Errorf("message %q does not name the data and where it was looked for", msg)
			}
		})
	}
}

// TestDirFound: an existing folder beside the repository is returned, under CI or
// not, without a skip or failure. The folder is made in a temporary copy of the
// layout (a go.mod in repo/, data in shared/), so the test needs no real data.
func TestDirFound(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo", "pkg")
	want := filepath.Join(base, "shared", "data")
	for _, d := range []string{repo, want} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "repo", "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		dir, f := run("data")
		if f.skipped != "" || f.failed != "" {
			t.Fatalf("CI=%q: skipped %q, failed %q; want the folder", ci, f.skipped, f.failed)
		}
		if dir != want {
			t.Errorf("CI=%q: Dir = %q; want %q", ci, dir, want)
		}
	}
	// A file where the folder should be is missing data, not a path to read.
	if err := os.WriteFile(filepath.Join(base, "shared", "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI", "true")
	if dir, f := run("file"); dir != "" || !strings.Contains(f.failed, "not a directory") {
		t.Errorf("a file as the data: dir %q, failed %q; want a failure saying it is not a directory", dir, f.failed)
	}
}
