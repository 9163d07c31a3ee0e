package record

import (
	"slices"
	"sync"
	"time"

	"github.com/ceiling-llm/ceiling/levelrule"
	"github.com/ceiling-llm/ceiling/trace"
)

// The default level size, when neither --requests-per-level nor --duration-per-level
// is given: a level is only worth its label when its steady-state window measured
// it, which is the rule of package levelrule, the same analyze judges the level by.
//
//   - closed loop: stop sending once the window so far (from the moment every worker
//     had a measured request in flight to the latest completion) holds the
//     completions and lasts the median lifetimes the rule asks for, with its margin,
//     and has lasted levelrule.SteadyState;
//   - open loop: send for levelrule.SteadyState (plus the warm-up requests' time);
//   - either way, never send past --max-level-duration after the level started
//     (then analyze says whether the level still made a valid window).
const (
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

	mu          sync.Mutex
	firstSent   map[int32]int64 // worker → its first measured send (ns)
	steadyStart int64           // when every worker had a measured request in flight (0 = not yet)
	lastEnd     int64           // the latest end of a measured request (ns)
	okEnds      []int64         // ends of successful measured requests before steadyStart was known
	inWindow    int             // successful completions since steadyStart
	lifetimes   []time.Duration // of the successful measured requests
	capped      bool            // stopped by maxUntil, not by the rule
	// minDone is the fewest completions the window must hold besides the rule's:
	// what the search's latency percentiles need (0: none).
	minDone int
}

func newLevelSizer(workers int, start time.Time, maxDur time.Duration) *levelSizer {
	return &levelSizer{workers: max(workers, 1), start: start, maxUntil: start.Add(maxDur),
		steady: levelrule.SteadyState, firstSent: map[int32]int64{}}
}

// observe counts one completed row.
func (s *levelSizer) observe(row *trace.Row) {
	if row.Warmup {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastEnd = max(s.lastEnd, row.EndNs)
	if _, ok := s.firstSent[row.Worker]; !ok {
		s.firstSent[row.Worker] = row.SentNs
		if len(s.firstSent) == s.workers {
			for _, t := range s.firstSent {
				s.steadyStart = max(s.steadyStart, t)
			}
			for _, e := range s.okEnds {
				if e >= s.steadyStart {
					s.inWindow++
				}
			}
			s.okEnds = nil
		}
	}
	// Success as analyze counts it: a 2xx answer with a first token and no error.
	if row.Error != nil || row.FirstTokenNs == nil || row.Status < 200 || row.Status > 299 {
		return
	}
	s.lifetimes = append(s.lifetimes, time.Duration(row.EndNs-row.SentNs))
	switch {
	case s.steadyStart == 0:
		s.okEnds = append(s.okEnds, row.EndNs)
	case row.EndNs >= s.steadyStart:
		s.inWindow++
	}
}

// enough reports whether the level should stop sending at now.
func (s *levelSizer) enough(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !now.Before(s.maxUntil) {
		s.capped = true
		return true
	}
	if s.steadyStart == 0 || s.lastEnd <= s.steadyStart {
		return false
	}
	steady := time.Duration(s.lastEnd - s.steadyStart)
	if s.inWindow < levelrule.MinCompletions(s.workers) || s.inWindow < s.minDone || steady < s.steady {
		return false // the cheap checks first: the median needs a sort
	}
	return levelrule.Sized(s.workers, s.inWindow, steady, median(s.lifetimes), s.steady)
}

// stoppedByCap reports whether the level ran into --max-level-duration.
func (s *levelSizer) stoppedByCap() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.capped
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// left estimates the time the level still runs at now: until the window holds the
// completions and lasts the time the rule asks for (at the completion rate so far),
// then one median lifetime for the requests in flight; false before the window
// started.
func (s *levelSizer) left(now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steadyStart == 0 || s.lastEnd <= s.steadyStart {
		return 0, false
	}
	p50 := median(s.lifetimes)
	left := levelrule.SizedWindow(p50, s.steady) - now.Sub(time.Unix(0, s.steadyStart))
	if need := max(levelrule.SizedCompletions(s.workers), s.minDone) - s.inWindow; need > 0 {
		if s.inWindow == 0 {
			return 0, false
		}
		perDone := time.Duration(s.lastEnd-s.steadyStart) / time.Duration(s.inWindow)
		left = max(left, time.Duration(need)*perDone)
	}
	return min(max(left, 0), s.maxUntil.Sub(now)) + p50, true
}
