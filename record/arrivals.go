package record

import (
	"math"
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
// A request's scheduled time is its arrival time, however late it was sent. With a
// shape (--burstiness) the intervals are gamma distributed with that shape and the
// same mean, as vLLM's benchmark does: shape 1 is Poisson, below 1 burstier (a
// coefficient of variation of 1/√shape), above 1 more regular.
type poisson struct {
	rate     float64 // requests per second
	shape    float64 // gamma shape of the intervals (0: 1, exponential)
	rng      *rand.Rand
	start    time.Time
	deadline time.Time
}

// interval is the next inter-arrival time in seconds.
func (p poisson) interval() float64 {
	if p.shape == 0 || p.shape == 1 {
		return p.rng.ExpFloat64() / p.rate
	}
	return gammaDraw(p.rng, p.shape) / (p.shape * p.rate)
}

// gammaDraw draws from the gamma distribution of shape k and scale 1 (Marsaglia and
// Tsang's method; for k < 1 boosted by U^(1/k)).
func gammaDraw(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return gammaDraw(rng, k+1) * math.Pow(1-rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// newPoisson is the pacer of level index: the same seed and level give the same
// arrival times.
func newPoisson(seed uint64, index int, rate float64, start, deadline time.Time) poisson {
	return poisson{rate: rate, rng: rand.New(rand.NewPCG(seed, uint64(index)+1<<32)), start: start, deadline: deadline}
}

// newGamma is newPoisson with gamma intervals of the given shape.
func newGamma(seed uint64, index int, rate, shape float64, start, deadline time.Time) poisson {
	p := newPoisson(seed, index, rate, start, deadline)
	p.shape = shape
	return p
}

func (p poisson) run(stop <-chan struct{}, take func() (int64, bool), send func(int64, int32, int64)) {
	var wg sync.WaitGroup
	next := p.start
	for {
		next = next.Add(time.Duration(p.interval() * float64(time.Second)))
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
