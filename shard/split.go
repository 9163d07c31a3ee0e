package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// Spec is one shard of N: Index runs from 0 to Count-1, as Kubernetes'
// JOB_COMPLETION_INDEX does. The zero Spec (Count 0) means "not sharded" and
// behaves as shard 0 of 1.
type Spec struct {
	Index int
	Count int
}

// MaxCount bounds the shards of one sweep: more is a typo, not a cluster.
const MaxCount = 4096

// Parse reads "I/N" (0-based I).
func Parse(s string) (Spec, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Spec{}, fmt.Errorf("shard %q: want INDEX/COUNT, e.g. 0/3", s)
	}
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil {
		return Spec{}, fmt.Errorf("shard %q: want INDEX/COUNT as whole numbers, e.g. 0/3", s)
	}
	sp := Spec{Index: idx, Count: cnt}
	return sp, sp.Validate()
}

// Validate checks the index against the count.
func (s Spec) Validate() error {
	switch {
	case s.Count < 1 || s.Count > MaxCount:
		return fmt.Errorf("shard count %d: want 1 to %d", s.Count, MaxCount)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard index %d of %d: the index runs from 0 to %d (0-based, as JOB_COMPLETION_INDEX)", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// Sharded reports whether the sweep is split at all.
func (s Spec) Sharded() bool { return s.Count > 1 }

func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.count()) }

func (s Spec) count() int { return max(s.Count, 1) }

// Workers is this shard's share of a closed-loop level of total workers: the
// shares of all shards add up to total, and differ by at most one.
func (s Spec) Workers(total int) int {
	n := s.count()
	w := total / n
	if s.Index < total%n {
		w++
	}
	return w
}

// WorkerBase is the number of this shard's first worker in the whole level, so
// that worker numbers stay unique when the shards are merged.
func (s Spec) WorkerBase(total int) int {
	n := s.count()
	return s.Index*(total/n) + min(s.Index, total%n)
}

// Rate is this shard's share of an open-loop level of rate total requests/s.
func (s Spec) Rate(total float64) float64 { return total / float64(s.count()) }

// requestIDBits leaves each shard 2^40 request ids (a trillion), far beyond any
// sweep, and room for MaxCount shards in an int64.
const requestIDBits = 40

// RequestIDBase is this shard's first request id, so that the merged rows'
// request_id stays unique.
func (s Spec) RequestIDBase() int64 {
	if !s.Sharded() {
		return 0
	}
	return int64(s.Index) << requestIDBits
}

// Seed is the workload seed of this shard of a sweep whose seed is base: one
// splitmix64 step of base and the index, so that shards draw unrelated prompts
// and lengths, and an unsharded sweep keeps base itself.
func (s Spec) Seed(base uint64) uint64 {
	if !s.Sharded() {
		return base
	}
	z := base + uint64(s.Index+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
