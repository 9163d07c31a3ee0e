package record

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counter hands out n request indices, like levelRun.take in count mode.
func counter(n int64) func() (int64, bool) {
	var next atomic.Int64
	return func() (int64, bool) {
		i := next.Add(1) - 1
		return i, i < n
	}
}

func TestClosedLoopKeepsWorkersBusy(t *testing.T) {
	const workers, n = 4, 40
	var inFlight, peak atomic.Int64
	var mu sync.Mutex
	seen := map[int64]int32{}
	closedLoop{workers: workers}.run(nil, counter(n), func(idx int64, worker int32, scheduled int64) {
		cur := inFlight.Add(1)
		for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
		}
		time.Sleep(time.Millisecond)
		inFlight.Add(-1)
		if scheduled != 0 {
			t.Errorf("closed-loop request %d scheduled at %d, want 0 (when sent)", idx, scheduled)
		}
		mu.Lock()
		seen[idx] = worker
		mu.Unlock()
	})
	if len(seen) != n {
		t.Errorf("%d requests sent, want %d", len(seen), n)
	}
	if p := peak.Load(); p > workers || p < 2 {
		t.Errorf("peak of %d requests in flight, want 2..%d", p, workers)
	}
	for idx, w := range seen {
		if w < 0 || w >= workers {
			t.Errorf("request %d on worker %d, want 0..%d", idx, w, workers-1)
		}
	}
}

func TestPoissonArrivals(t *testing.T) {
	const n, rate = 2000, 1e6 // fast enough that the test does not wait
	start := time.Now()
	var mu sync.Mutex
	var sched []int64
	newPoisson(7, 3, rate, start, time.Time{}).run(nil, counter(n), func(idx int64, worker int32, scheduled int64) {
		mu.Lock()
		sched = append(sched, scheduled)
		mu.Unlock()
	})
	if len(sched) != n {
		t.Fatalf("%d requests sent, want %d", len(sched), n)
	}
	// Arrival times are fixed by the pacer, not by when the goroutines ran.
	again := arrivalTimes(t, 7, 3, rate, start, n)
	var sum float64
	prev := start.UnixNano()
	for i, at := range again {
		if at < prev {
			t.Fatalf("arrival %d at %d before the previous one at %d", i, at, prev)
		}
		sum += float64(at - prev)
		prev = at
	}
	if mean := sum / n / 1e9; math.Abs(mean-1/rate)/(1/rate) > 0.1 {
		t.Errorf("mean gap %.3g s, want 1/rate = %.3g s within 10%%", mean, 1/rate)
	}
	got := map[int64]bool{}
	for _, s := range sched {
		got[s] = true
	}
	for _, at := range again {
		if !got[at] {
			t.Fatalf("arrival at %d not among the scheduled times: the same seed and level must give the same arrivals", at)
		}
	}
	if other := arrivalTimes(t, 7, 4, rate, start, 10); other[0] == again[0] && other[1] == again[1] {
		t.Error("levels 3 and 4 got the same arrival times")
	}
}

func TestPoissonStopsAtDeadline(t *testing.T) {
	start := time.Now()
	deadline := start.Add(50 * time.Millisecond)
	var sent atomic.Int64
	newPoisson(1, 0, 1000, start, deadline).run(nil, func() (int64, bool) { return sent.Load(), true }, func(int64, int32, int64) { sent.Add(1) })
	// 1000/s for 50 ms: about 50 arrivals; none after the deadline.
	if n := sent.Load(); n < 20 || n > 100 {
		t.Errorf("%d requests in 50 ms at 1000/s, want about 50", n)
	}
	if late := time.Since(deadline); late > time.Second {
		t.Errorf("returned %s after the deadline", late)
	}
}

func TestPoissonStopEndsTheWait(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// One request per 1000 s: only stop can end the wait.
		newPoisson(1, 0, 0.001, time.Now(), time.Time{}).run(stop,
			func() (int64, bool) { return 0, false }, func(int64, int32, int64) {})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the pacer kept waiting after stop")
	}
}

// arrivalTimes replays the pacer of (seed, level) for n arrivals.
func arrivalTimes(t *testing.T, seed uint64, index int, rate float64, start time.Time, n int) []int64 {
	t.Helper()
	p := newPoisson(seed, index, rate, start, time.Time{})
	var out []int64
	next := start
	for range n {
		next = next.Add(time.Duration(p.rng.ExpFloat64() / rate * float64(time.Second)))
		out = append(out, next.UnixNano())
	}
	return out
}
