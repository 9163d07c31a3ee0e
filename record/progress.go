package record

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// levelStats follows a level for the progress line and its LevelInfo.
type levelStats struct {
	mu        sync.Mutex
	lv        level
	count     int // requests planned (0 = until the deadline)
	total     int // levels planned (0 = auto)
	w         io.Writer
	live      bool
	done      int
	measured  int // non-warm-up requests
	errors    int // non-warm-up failures
	outTokens int64
	firstSent int64
	lastEnd   int64
	ttfts     []float64
	lags      []float64
	stop      chan struct{}
	stopped   chan struct{}
}

func newLevelStats(lv level, count, total int, w io.Writer, live bool) *levelStats {
	s := &levelStats{lv: lv, count: count, total: total, w: w, live: live}
	if w != nil {
		// A terminal gets a line rewritten in place; a log gets a plain line now and
		// then, so that a long level still shows it is alive.
		every, format := 10*time.Second, "%s\n"
		if live {
			every, format = 250*time.Millisecond, "\r%s\x1b[K"
		}
		s.stop, s.stopped = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(s.stopped)
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-s.stop:
					return
				case <-t.C:
					s.mu.Lock()
					line := s.lineLocked()
					s.mu.Unlock()
					fmt.Fprintf(w, format, line)
				}
			}
		}()
	}
	return s
}

func (s *levelStats) add(row *trace.Row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done++
	if row.Warmup {
		return
	}
	s.measured++
	if row.Error != nil {
		s.errors++
		return
	}
	if row.OutputTokens != nil {
		s.outTokens += int64(*row.OutputTokens)
	}
	if s.firstSent == 0 || row.SentNs < s.firstSent {
		s.firstSent = row.SentNs
	}
	s.lastEnd = max(s.lastEnd, row.EndNs)
	if row.FirstTokenNs != nil {
		s.ttfts = append(s.ttfts, float64(*row.FirstTokenNs-row.SentNs)/1e9)
	}
	s.lags = append(s.lags, float64(row.SentNs-row.ScheduledNs)/1e9)
}

// outputTokS is the naive output throughput of the level's measured requests.
func (s *levelStats) outputTokS() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastEnd <= s.firstSent {
		return 0
	}
	return float64(s.outTokens) / (float64(s.lastEnd-s.firstSent) / 1e9)
}

func (s *levelStats) sendLagP99() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return quantile(s.lags, 0.99)
}

// lineLocked renders the progress line, e.g.
// "level 3/6  c=8  64/64 req  812.5 tok/s  p50 TTFT 0.21s  0 errors".
func (s *levelStats) lineLocked() string {
	var b strings.Builder
	if s.total > 0 {
		fmt.Fprintf(&b, "level %d/%d", s.lv.index+1, s.total)
	} else {
		fmt.Fprintf(&b, "level %d", s.lv.index+1)
	}
	if s.lv.rate > 0 {
		fmt.Fprintf(&b, "  rate=%g/s", s.lv.rate)
	} else {
		fmt.Fprintf(&b, "  c=%d", s.lv.concurrency)
	}
	if s.lv.repeats > 1 {
		fmt.Fprintf(&b, " (repeat %d/%d)", s.lv.repeat+1, s.lv.repeats)
	}
	if s.count > 0 {
		fmt.Fprintf(&b, "  %d/%d req", s.done, s.count)
	} else {
		fmt.Fprintf(&b, "  %d req", s.done)
	}
	tput := 0.0
	if s.lastEnd > s.firstSent {
		tput = float64(s.outTokens) / (float64(s.lastEnd-s.firstSent) / 1e9)
	}
	fmt.Fprintf(&b, "  %.1f tok/s", tput)
	if len(s.ttfts) > 0 {
		fmt.Fprintf(&b, "  p50 TTFT %.2fs", quantile(s.ttfts, 0.5))
	} else {
		b.WriteString("  p50 TTFT -")
	}
	fmt.Fprintf(&b, "  %d errors", s.errors)
	return b.String()
}

func (s *levelStats) finish() {
	if s.w == nil {
		return
	}
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
	}
	s.mu.Lock()
	line := s.lineLocked()
	s.mu.Unlock()
	if s.live {
		fmt.Fprintf(s.w, "\r%s\x1b[K\n", line)
	} else {
		fmt.Fprintln(s.w, line)
	}
}

// quantile interpolates linearly between order statistics (numpy's default).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}
