package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(path, []byte("new contents")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "new contents" {
		t.Errorf("file holds %q, want %q", got, "new contents")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	assertOnly(t, filepath.Dir(path), "out.json")
}

func TestWriteFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.html")
	if err := WriteBytes(path, []byte("good report")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		if _, err := w.Write([]byte("half a rep")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want it to wrap %v", err, boom)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "good report" {
		t.Errorf("a failed write left %q, want the old %q", got, "good report")
	}
	assertOnly(t, dir, "out.html")
}

func TestWriteMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "out.json")
	err := WriteBytes(path, []byte("x"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v, want one wrapping os.ErrNotExist", err)
	}
}

// assertOnly checks that dir holds exactly the named file (no temporary left over).
func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only %s", names, name)
	}
}

// Issue 31 item 6: whatever a command checked before, the write itself never
// replaces anything but a regular file (merge --force turned a FIFO into a
// regular file; as root, /dev/null would have been replaced).
func TestWriteNeverReplacesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, wantKind string
	}{
		{fifo, "named pipe"},
		{link, "symbolic link"},
		{os.DevNull, "device"},
	} {
		before, err := os.Lstat(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		err = WriteBytes(tt.path, []byte("new"))
		if err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.wantKind) {
			t.Errorf("writing %s: %v, want a refusal naming it as %s", tt.path, err, tt.wantKind)
		}
		after, err := os.Lstat(tt.path)
		if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
			t.Errorf("%s was replaced: mode %v, was %v (%v)", tt.path, after.Mode(), before.Mode(), err)
		}
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep me" {
		t.Errorf("the symlink's target holds %q", got)
	}
	assertNoTemp(t, dir)
	assertNoTemp(t, filepath.Dir(os.DevNull))
}

// assertNoTemp checks that dir holds no temporary file of a write.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	tmps, _ := filepath.Glob(filepath.Join(dir, "*"+TempSuffix))
	if len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}
