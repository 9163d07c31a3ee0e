package analyze

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Per-request values on disk: exact percentiles need every value of a level, but
// not every level at once. A level's latencies (TTFT, E2E, TPOT, ...) are appended
// to a spillCol, which keeps at most spillChunk values in memory and appends the
// rest to a file in a temporary directory (os.TempDir, so $TMPDIR). When the level
// is finished its columns are read back one at a time, sorted, summarized and
// dropped, so the peak memory of the per-request values is that of the largest
// single column of one level (8 bytes a request of that level), not 8 bytes × every
// value of every request of the trace. A trace of a few thousand requests never
// touches the disk.

// spillChunk is the most values a column keeps in memory before appending them to
// its file (32 KiB).
const spillChunk = 4096

// spillDir is the temporary directory of one analysis. It is created on the first
// spill and removed by close; err is the first write error, reported after the pass.
type spillDir struct {
	path  string
	next  int
	chunk int // values a column keeps in memory (0 = spillChunk, negative = all)
	err   error
}

// limit is the most values a column keeps in memory, 0 for no limit.
func (d *spillDir) limit() int {
	switch {
	case d == nil || d.chunk < 0:
		return 0
	case d.chunk == 0:
		return spillChunk
	}
	return d.chunk
}

// file returns the name of a new spill file, creating the directory on first use.
func (d *spillDir) file() (string, error) {
	if d.path == "" {
		p, err := os.MkdirTemp("", "ceiling-analyze-")
		if err != nil {
			return "", fmt.Errorf("creating a directory for per-request values: %w", err)
		}
		d.path = p
	}
	d.next++
	return filepath.Join(d.path, fmt.Sprintf("%d.bin", d.next)), nil
}

// close removes the directory and everything in it.
func (d *spillDir) close() error {
	if d == nil || d.path == "" {
		return nil
	}
	err := os.RemoveAll(d.path)
	d.path = ""
	return err
}

// spillCol is one column of per-request values (int64 nanoseconds or float64
// seconds) of one level, in arrival order.
type spillCol[T int64 | float64] struct {
	dir  *spillDir
	buf  []T
	path string // "" until the first spill
	disk int    // values in the file
}

// add appends v; a failed write is kept in dir.err (and the values are kept in
// memory, so nothing is lost).
func (c *spillCol[T]) add(v T) {
	c.buf = append(c.buf, v)
	if n := c.dir.limit(); n > 0 && len(c.buf) >= n && c.dir.err == nil {
		if err := c.flush(); err != nil {
			c.dir.err = err
		}
	}
}

// len is the number of values.
func (c *spillCol[T]) len() int { return c.disk + len(c.buf) }

func (c *spillCol[T]) flush() error {
	if c.path == "" {
		p, err := c.dir.file()
		if err != nil {
			return err
		}
		c.path = p
	}
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spilling per-request values: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	if err := binary.Write(w, binary.LittleEndian, c.buf); err != nil {
		f.Close()
		return fmt.Errorf("spilling per-request values to %s: %w", c.path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("spilling per-request values to %s: %w", c.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("spilling per-request values to %s: %w", c.path, err)
	}
	c.disk += len(c.buf)
	c.buf = c.buf[:0]
	return nil
}

// sorted returns every value in ascending order and empties the column (its file
// is removed).
func (c *spillCol[T]) sorted() ([]T, error) {
	out := make([]T, c.disk, c.len())
	if c.disk > 0 {
		f, err := os.Open(c.path)
		if err != nil {
			return nil, fmt.Errorf("reading back per-request values: %w", err)
		}
		err = binary.Read(bufio.NewReaderSize(f, 1<<16), binary.LittleEndian, out)
		f.Close()
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = fmt.Errorf("%s holds fewer than the %d values written", c.path, c.disk)
		}
		if err != nil {
			return nil, fmt.Errorf("reading back per-request values: %w", err)
		}
		os.Remove(c.path)
	}
	out = append(out, c.buf...)
	*c = spillCol[T]{dir: c.dir}
	slices.Sort(out)
	return out, nil
}
