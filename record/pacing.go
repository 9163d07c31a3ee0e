package record

import (
	"sync"
	"time"
)

// Pacing: the one loop behind every open-loop pacer (Poisson or gamma arrivals,
// replayed traces), the one set of closed-loop workers (closed loop,
// conversations) and the one interruptible wait (think times).

// sleepFor waits d, or until stop closes, whichever comes first.
func sleepFor(d time.Duration, stop <-chan struct{}) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-stop:
		t.Stop()
	}
}

// paceSchedule sends one request at each instant next gives (until it says there
// is none), each on its own goroutine, so a slow request never delays the next;
// a request's scheduled time is its instant, however late it was sent. It returns
// once every request sent has ended.
func paceSchedule(stop <-chan struct{}, take func() (int64, bool), send func(int64, int32, int64), next func() (time.Time, bool)) {
	var wg sync.WaitGroup
	for {
		at, more := next()
		if !more {
			break
		}
		sleepFor(time.Until(at), stop)
		idx, ok := take()
		if !ok {
			break
		}
		wg.Add(1)
		go func(idx int64, scheduled int64) {
			defer wg.Done()
			send(idx, 0, scheduled)
		}(idx, at.UnixNano())
	}
	wg.Wait()
}

// eachWorker runs fn as n workers at once (closed loop, conversations) and returns
// once every one has returned.
func eachWorker(n int, fn func(worker int32)) {
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func(worker int32) {
			defer wg.Done()
			fn(worker)
		}(int32(w))
	}
	wg.Wait()
}
