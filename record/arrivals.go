package record

import (
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
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
	eachWorker(c.workers, func(worker int32) {
		for {
			idx, ok := take()
			if !ok {
				return
			}
			send(idx, worker, 0)
		}
	})
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
	// Gamma(shape, 1) ÷ shape has mean 1 (gonum: Marsaglia and Tsang, and Liu,
	// Martin and Syring below shape 0.2).
	return distuv.Gamma{Alpha: p.shape, Beta: 1, Src: p.rng}.Rand() / (p.shape * p.rate)
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
	next := p.start
	paceSchedule(stop, take, send, func() (time.Time, bool) {
		next = next.Add(time.Duration(p.interval() * float64(time.Second)))
		return next, p.deadline.IsZero() || next.Before(p.deadline)
	})
}
