package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// staleLock is a lock file left by a process that no longer holds its lock.
type staleLock struct {
	pid   int  // the pid the file names (0 when none)
	alive bool // whether a process with that pid runs now (it does not hold the lock)
}

// String says what is known of the lock taken over, for the progress line.
func (s staleLock) String() string {
	if s.alive {
		return fmt.Sprintf("names pid %d, which is running but does not hold the lock (the pid was reused, or the file was left by another machine or container): the lock is stale", s.pid)
	}
	return fmt.Sprintf("was left by process %d, which is no longer running", s.pid)
}

// lockOutput takes the lock of output, or says which process holds it. stale
// describes a lock file whose process no longer held it (pid 0 when none).
//
// The lock file is only ever a regular file: a symbolic link there would have the
// recorder truncate and overwrite its target, and a FIFO would block the first
// read forever. Both are refused before anything is read or written, by an Lstat
// for the message and by O_NOFOLLOW and O_NONBLOCK on the open itself, in case
// the path is replaced in between.
func lockOutput(output string) (l *runLock, stale staleLock, err error) {
	path := LockPath(output)
	for range 3 {
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, staleLock{}, notRegularLock(path, fi.Mode())
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
		if err != nil {
			if errors.Is(err, syscall.ELOOP) {
				return nil, staleLock{}, notRegularLock(path, fs.ModeSymlink)
			}
			return nil, staleLock{}, fmt.Errorf("cannot write the lock file %s: %w", path, err)
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			if err != nil {
				return nil, staleLock{}, fmt.Errorf("cannot read the lock file %s: %w", path, err)
			}
			return nil, staleLock{}, notRegularLock(path, fi.Mode())
		}
		owner := readPid(f)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, staleLock{}, fmt.Errorf("%s is %w (pid %d, lock file %s): wait for it to finish or stop it; a second recorder, Options.Resume and Options.Force all refuse while it runs",
					output, ErrLocked, owner, path)
			}
			return nil, staleLock{}, fmt.Errorf("cannot lock %s: %w", path, err)
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
			return nil, staleLock{}, fmt.Errorf("cannot write the lock file %s: %w", path, err)
		}
		return &runLock{f: f, path: path}, staleLock{pid: owner, alive: owner > 0 && processAlive(owner)}, nil
	}
	return nil, staleLock{}, fmt.Errorf("cannot lock %s: it keeps being replaced", path)
}

// notRegularLock is the refusal of a lock path that is not a regular file.
func notRegularLock(path string, mode fs.FileMode) error {
	kind := "not a regular file"
	switch {
	case mode&fs.ModeSymlink != 0:
		kind = "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	case mode&fs.ModeDevice != 0:
		kind = "a device"
	case mode.IsDir():
		kind = "a directory"
	}
	return fmt.Errorf("cannot lock: the lock file %s is %s, not a regular file: the recorder never writes through it; remove it (after checking what it is) or choose another output path", path, kind)
}

// processAlive says whether a process with pid exists (signal 0 is delivered to
// no one; EPERM means it exists but belongs to another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
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
