package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is returned (wrapped) when another recorder is writing the same output.
var ErrLocked = errors.New("being recorded by another process")

// runLock is held on OUTPUT.lock for the whole recording: a second recorder, a
// --resume and a --force of the same output refuse while it is held, instead of
// calling the live run "interrupted" and doubling its load or deleting its parts.
// The file holds the owner's pid, for the message. The lock itself is flock(2) on
// the file, which the kernel releases when its process dies (kill -9 included), so
// a lock left by a dead process is recognised as stale and taken over; a pid alone
// could be reused by an unrelated process.
type runLock struct {
	f    *os.File
	path string
}

// LockPath is the lock file of a recording to output.
func LockPath(output string) string { return output + ".lock" }

// lockOutput takes the lock of output, or says which process holds it. stale is
// the pid of a dead process whose lock was taken over (0 when none).
func lockOutput(output string) (l *runLock, stale int, err error) {
	path := LockPath(output)
	for range 3 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, 0, fmt.Errorf("cannot write the lock file %s: %w", path, err)
		}
		owner := readPid(f)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, 0, fmt.Errorf("%s is %w (pid %d, lock file %s): wait for it to finish or stop it; a second recorder, Options.Resume and Options.Force all refuse while it runs",
					output, ErrLocked, owner, path)
			}
			return nil, 0, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		// The file may have been removed by its owner's release between the open and
		// the lock: the lock must be on the file that is at path now.
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(held, now) {
			f.Close()
			continue
		}
		err = f.Truncate(0)
		if err == nil {
			_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		if err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("cannot write the lock file %s: %w", path, err)
		}
		return &runLock{f: f, path: path}, owner, nil
	}
	return nil, 0, fmt.Errorf("cannot lock %s: it keeps being replaced", path)
}

// readPid is the pid written in a lock file (0 if none).
func readPid(f *os.File) int {
	b, _ := io.ReadAll(io.LimitReader(f, 32))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// release removes the lock file and drops the lock (in that order: a recorder that
// opens the file in between sees it replaced and tries again).
func (l *runLock) release() {
	if l == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
}
