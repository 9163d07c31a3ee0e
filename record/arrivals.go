package record

import (
	"math/rand/v2"
	"sync"
	"time"
)

// How a level's requests arrive: closed-loop workers, each sending its next request
// when the previous one ends, or open-loop Poisson arrivals paced by a clock,
// whatever the server's latency. Both feed the same request path (levelRun.send),
// as vegeta separates its pacer from its attack.

// arrivals drives one level. run calls take for the next request index until take
// says the level is done, hands each to send, and returns once every request it
// sent has finished. stop ends waiting early (the level was stopped).
type arrivals interface {
	run(stop <-chan struct{}, take func() (int64, bool), send func(idx int64, worker int32, scheduledNs int64))
}

// closedLoop is N workers, each with one request in flight. A closed-loop request
// is scheduled when it is sent (scheduledNs 0).
type closedLoop struct{ workers int }

func (c closedLoop) run(_ <-chan struct{}, take func() (int64, bool), send func(int64, int32, int64)) {
	var wg sync.WaitGroup
	for w := range c.workers {
		wg.Add(1)
		go func(worker int32) {
			defer wg.Done()
			for {
				idx, ok := take()
				if !ok {
					return
				}
				send(idx, worker, 0)
			}
		}(int32(w))
	}
	wg.Wait()
}

// poisson sends requests at exponentially distributed intervals of mean 1/rate from
// start, each on its own goroutine, until deadline (zero: until take says done).
// A request's scheduled time is its arrival time, however late it was sent.
type poisson struct {
	rate     float64 // requests per second
	rng      *rand.Rand
	start    time.Time
	deadline time.Time
}

// newPoisson is the pacer of level index: the same seed and level give the same
// arrival times.
func newPoisson(seed uint64, index int, rate float64, start, deadline time.Time) poisson {
	return poisson{rate: rate, rng: rand.New(rand.NewPCG(seed, uint64(index)+1<<32)), start: start, deadline: deadline}
}

func (p poisson) run(stop <-chan struct{}, take func() (int64, bool), send func(int64, int32, int64)) {
	var wg sync.WaitGroup
	next := p.start
	for {
		next = next.Add(time.Duration(p.rng.ExpFloat64() / p.rate * float64(time.Second)))
		if !p.deadline.IsZero() && !next.Before(p.deadline) {
			break
		}
		if d := time.Until(next); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-stop:
				t.Stop()
			}
		}
		idx, ok := take()
		if !ok {
			break
		}
		wg.Add(1)
		go func(idx int64, scheduled int64) {
			defer wg.Done()
			send(idx, 0, scheduled)
		}(idx, next.UnixNano())
	}
	wg.Wait()
}
