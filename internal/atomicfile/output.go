package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Guard is the one rule every writer of the tool follows before it replaces a file:
// an input is never overwritten, anything but a regular file (a symbolic link, a
// device, a FIFO, a socket, a directory) is never replaced, and an existing trace
// or sidecar (a Parquet file) is replaced only with Force.
type Guard struct {
	// Inputs are the files and directories the command reads; an output that is
	// one of them, or lies inside one, is refused even with Force.
	Inputs []string
	// Force allows replacing an existing Parquet file (and, without ReplaceFiles,
	// any existing regular file).
	Force bool
	// ReplaceFiles allows replacing an existing regular file that is not Parquet
	// without Force (a report or an analysis written again).
	ReplaceFiles bool
}

// ErrExists is returned (wrapped) when the output exists and Force is needed.
var ErrExists = errors.New("exists")

// Check says whether path may be written under g. A path that does not exist may.
func (g Guard) Check(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return g.notInsideInput(path)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("cannot write %s: it is %s, not a regular file, and is never replaced (choose another output path)", path, kind(fi.Mode()))
	}
	for _, in := range g.Inputs {
		if st, err := os.Stat(in); err == nil && os.SameFile(fi, st) {
			return fmt.Errorf("cannot write %s: it is an input of this command (%s), which is never overwritten", path, in)
		}
	}
	if err := g.notInsideInput(path); err != nil {
		return err
	}
	if g.Force {
		return nil
	}
	if isParquet(path) {
		return fmt.Errorf("%s %w and is a Parquet file (a trace or a metrics sidecar?): pass Guard.Force to replace it, or choose another output path", path, ErrExists)
	}
	if !g.ReplaceFiles {
		return fmt.Errorf("%s %w: pass Guard.Force to replace it, or choose another output path", path, ErrExists)
	}
	return nil
}

// notInsideInput refuses a path inside an input directory (a parts directory).
func (g Guard) notInsideInput(path string) error {
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return nil // the write itself reports a missing directory
	}
	for _, in := range g.Inputs {
		if st, err := os.Stat(in); err == nil && st.IsDir() && os.SameFile(dir, st) {
			return fmt.Errorf("cannot write %s: it is inside %s, an input of this command, which is never written to", path, in)
		}
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// isParquet says whether the regular file at path begins with Parquet's magic.
func isParquet(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false
	}
	return bytes.Equal(magic[:], []byte("PAR1"))
}
