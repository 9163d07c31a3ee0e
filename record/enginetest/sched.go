package enginetest

import (
	"container/list"
	"context"
	"sync"
)

// scheduler admits requests in arrival order (FIFO) under a slot limit and a KV token
// budget, the way a continuous-batching server admits work: a request waits until a
// slot is free and its prompt+max_tokens fit in the free KV budget. The queue head
// blocks those behind it (no overtaking), as vLLM's default FCFS policy does.
type scheduler struct {
	slots int // 0 = unlimited
	kv    int // 0 = unlimited

	mu      sync.Mutex
	running int
	kvUsed  int
	queue   list.List // of *waiter
}

type waiter struct {
	kv      int
	ready   chan struct{}
	granted bool // set under scheduler.mu
}

// fits reports whether a request needing kv tokens can start now. A request larger
// than the whole budget runs alone rather than waiting forever.
func (s *scheduler) fits(kv int) bool {
	if s.slots > 0 && s.running >= s.slots {
		return false
	}
	if s.kv > 0 && s.kvUsed+kv > s.kv && s.running > 0 {
		return false
	}
	return true
}

func (s *scheduler) grantLocked(kv int) {
	s.running++
	s.kvUsed += kv
}

// acquire blocks until the request may run or ctx is done. On success the caller
// must call release(kv) exactly once.
func (s *scheduler) acquire(ctx context.Context, kv int) error {
	s.mu.Lock()
	if s.queue.Len() == 0 && s.fits(kv) {
		s.grantLocked(kv)
		s.mu.Unlock()
		return nil
	}
	w := &waiter{kv: kv, ready: make(chan struct{})}
	e := s.queue.PushBack(w)
	s.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted {
		// Granted just as the context ended: give the capacity back.
		s.running--
		s.kvUsed -= kv
	} else {
		s.queue.Remove(e)
	}
	s.dispatchLocked()
	s.mu.Unlock()
	return ctx.Err()
}

func (s *scheduler) release(kv int) {
	s.mu.Lock()
	s.running--
	s.kvUsed -= kv
	s.dispatchLocked()
	s.mu.Unlock()
}

// dispatchLocked starts queued requests from the head while they fit.
func (s *scheduler) dispatchLocked() {
	for {
		e := s.queue.Front()
		if e == nil {
			return
		}
		w := e.Value.(*waiter)
		if !s.fits(w.kv) {
			return
		}
		s.queue.Remove(e)
		s.grantLocked(w.kv)
		w.granted = true
		close(w.ready)
	}
}

// state returns the running and waiting counts and the KV tokens in use.
func (s *scheduler) state() (running, waiting, kvUsed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.queue.Len(), s.kvUsed
}
