package record

import (
	"sync"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// The default level size, when neither --requests-per-level nor --duration-per-level
// is given: a level is only worth its label when every worker has been busy long
// enough for the window's throughput to be a steady state (analyze marks the rest
// invalid). The rule:
//
//   - closed loop: stop sending once every worker has completed at least
//     sizeRequestsPerWorker measured requests and the steady state (from the moment
//     every worker had a measured request in flight) has lasted sizeSteadyState;
//   - open loop: send for sizeSteadyState (plus the warm-up requests' time);
//   - either way, never send past --max-level-duration after the level started
//     (then analyze says whether the level still made a valid window).
const (
	sizeRequestsPerWorker = 4
	sizeSteadyState       = 30 * time.Second
	// defaultMaxLevelDuration caps a default-sized level: a slow server at high
	// concurrency must not run one level for an hour.
	defaultMaxLevelDuration = 10 * time.Minute
)

// levelSizer decides when a default-sized closed-loop level has sent enough. It is
// fed every row as it completes and asked before every send.
type levelSizer struct {
	workers  int
	start    time.Time
	maxUntil time.Time
	steady   time.Duration
	perWork  int

	mu          sync.Mutex
	firstSent   map[int32]int64 // worker → its first measured send (ns)
	done        map[int32]int   // worker → measured requests completed
	satisfied   int             // workers with perWork completions
	steadyStart int64           // when every worker had a measured request in flight (0 = not yet)
}

func newLevelSizer(workers int, start time.Time, maxDur time.Duration) *levelSizer {
	return &levelSizer{workers: max(workers, 1), start: start, maxUntil: start.Add(maxDur),
		steady: sizeSteadyState, perWork: sizeRequestsPerWorker,
		firstSent: map[int32]int64{}, done: map[int32]int{}}
}

// observe counts one completed row.
func (s *levelSizer) observe(row *trace.Row) {
	if row.Warmup {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.firstSent[row.Worker]; !ok {
		s.firstSent[row.Worker] = row.SentNs
		if len(s.firstSent) == s.workers {
			for _, t := range s.firstSent {
				s.steadyStart = max(s.steadyStart, t)
			}
		}
	}
	s.done[row.Worker]++
	if s.done[row.Worker] == s.perWork {
		s.satisfied++
	}
}

// enough reports whether the level should stop sending at now.
func (s *levelSizer) enough(now time.Time) bool {
	if !now.Before(s.maxUntil) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.satisfied >= s.workers && s.steadyStart > 0 && now.UnixNano()-s.steadyStart >= int64(s.steady)
}
