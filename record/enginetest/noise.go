package enginetest

import (
	"math"
	"time"
)

// Interference: a busy machine or a noisy neighbour slows a server for seconds
// at a time, so that two levels recorded minutes apart differ by more than either
// level's own requests vary. Config.Noise imitates it: time since the engine
// started is cut into NoisePeriod spans, and every token gap and step of a span
// lasts 1 + Noise·u times as long, u drawn uniformly from [0, 1) for that span from
// NoiseSeed. The slowdown is a function of the time alone (a hash of the span's
// index), so two engines with one seed slow down alike and nothing is shared
// between requests.

// defaultNoisePeriod is the span one slowdown lasts.
const defaultNoisePeriod = 500 * time.Millisecond

// slowed is d as the engine's interference stretches it now.
func (c *Config) slowed(d time.Duration) time.Duration {
	if c.Noise <= 0 || d <= 0 {
		return d
	}
	period := c.NoisePeriod
	if period <= 0 {
		period = defaultNoisePeriod
	}
	span := uint64(time.Since(c.started) / period)
	u := float64(splitmix64(c.NoiseSeed^span)>>11) / (1 << 53)
	return time.Duration(math.Round(float64(d) * (1 + c.Noise*u)))
}

// splitmix64 is Steele, Lea and Flood's SplitMix64 finalizer ("Fast splittable
// pseudorandom number generators", OOPSLA 2014): a well-mixed hash of x.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
