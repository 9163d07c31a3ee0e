// Package atomicfile writes output files so that a reader, or a crash at any moment,
// finds either the previous file or the complete new one, never a truncated file
// under the final name.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// TempSuffix ends the name of the temporary file a write goes through. A file with
// it is what a killed writer left half-written; readers skip such files and the
// recorder's --resume removes them.
const TempSuffix = ".inprogress"

// Write creates path by calling write on a temporary file in the same directory,
// then fsyncs it, renames it over path and fsyncs the directory, so that the rename
// survives a power loss. On error the temporary file is removed and path is left
// as it was. The file gets mode 0644.
//
// Anything at path but a regular file (a symbolic link, a FIFO, a device such as
// /dev/null, a socket, a directory) is never replaced, whatever the caller checked
// (Guard.Check) or was told (--force): it is looked at before the temporary file
// is made and again just before the rename.
func Write(path string, write func(w io.Writer) error) error {
	if err := replaceable(path); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*"+TempSuffix)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(what string, err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if err := write(f); err != nil {
		return fail("writing", err)
	}
	// CreateTemp makes the file 0600; an output is as readable as os.Create's.
	if err := f.Chmod(0o644); err != nil {
		return fail("writing", err)
	}
	if err := f.Sync(); err != nil {
		return fail("syncing", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("closing %s: %w", path, err)
	}
	if err := replaceable(path); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("renaming onto %s: %w", path, err)
	}
	return SyncDir(dir)
}

// replaceable refuses a path that exists and is not a regular file.
func replaceable(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // a missing path is created; another error is the write's to report
	}
	return fmt.Errorf("cannot write %s: it is %s, not a regular file, and is never replaced (choose another output path)", path, kind(fi.Mode()))
}

// WriteBytes writes data to path atomically, as Write does.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir fsyncs a directory, making the creations and renames in it durable.
// File systems that cannot sync a directory (os.ErrInvalid) are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
