package record

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-llm/ceiling/internal/errtext"
	"github.com/ceiling-llm/ceiling/internal/safetext"
	"github.com/ceiling-llm/ceiling/trace"
)

// levelStats follows a level for the progress line and its LevelInfo.
type levelStats struct {
	mu       sync.Mutex
	lv       level
	count    int // requests planned (0 = until the deadline)
	total    int // levels planned (0 = auto)
	w        io.Writer
	live     bool
	done     int
	measured int // non-warm-up requests
	errors   int // non-warm-up failures
	// errorTexts counts the failures by their text with its numbers blanked (so
	// "request (256 tokens)" and "(300 tokens)" count together), keeping the first
	// text seen, for the line's most frequent one; at most errorTextKinds are told
	// apart, so a server answering each request differently cannot grow it.
	errorTexts map[string]*errorText
	outTokens  int64
	firstSent  int64
	lastEnd    int64
	ttfts      []float64
	lags       []float64
	stop       chan struct{}
	stopped    chan struct{}
	plan       levelPlan
	started    time.Time
	ended      time.Time // set by finish
}

// levelPlan is what the progress line says about a level's size and the time left,
// in the level and in the sweep.
type levelPlan struct {
	target string // e.g. "target 64 req"; "" none
	// left estimates the time left in the level at now (false: not yet known).
	left func(now time.Time) (time.Duration, bool)
	// later is how many levels follow this one (-1: unknown, --concurrency auto);
	// perLevel the mean duration of the levels recorded before it (0: none yet).
	later    int
	perLevel time.Duration
}

func newLevelStats(lv level, count, total int, w io.Writer, live bool) *levelStats {
	s := &levelStats{lv: lv, count: count, total: total, w: w, live: live, started: time.Now()}
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
					line := s.lineAt(time.Now())
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
		if s.errorTexts == nil {
			s.errorTexts = map[string]*errorText{}
		}
		key := errtext.Key(*row.Error)
		switch e := s.errorTexts[key]; {
		case e != nil:
			e.n++
		case len(s.errorTexts) < errorTextKinds:
			// A resumed trace's rows may hold what an older recorder stored raw.
			s.errorTexts[key] = &errorText{text: errtext.Clip(safetext.Line(*row.Error), errorTextChars), n: 1}
		}
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

// setPlan sets what the line says of the level's target and time left.
func (s *levelStats) setPlan(p levelPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plan = p
}

// lineAt renders the progress line at now (s.mu held), e.g.
// "level 2 (3 of 6)  c=8  target 64 req  40/64 req  812.5 tok/s  p50 TTFT 0.21s  0 errors  ETA level 0:12, sweep 3:40".
func (s *levelStats) lineAt(now time.Time) string {
	var b strings.Builder
	// The level's number is the one stored in the trace, which analyze's tables,
	// warnings and the sweep's stop messages use (from 0); its place in the plan
	// is said apart, so "level 4 (5 of 6)" and "level 4 stopped" are one level.
	if s.total > 0 {
		fmt.Fprintf(&b, "level %d (%d of %d)", s.lv.index, s.lv.index+1, s.total)
	} else {
		fmt.Fprintf(&b, "level %d", s.lv.index)
	}
	if s.lv.rate > 0 {
		fmt.Fprintf(&b, "  rate=%g/s", s.lv.rate)
	} else {
		fmt.Fprintf(&b, "  c=%d", s.lv.concurrency)
	}
	if s.lv.repeats > 1 {
		fmt.Fprintf(&b, " (repeat %d/%d)", s.lv.repeat+1, s.lv.repeats)
	}
	if s.plan.target != "" {
		fmt.Fprintf(&b, "  %s", s.plan.target)
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
	b.WriteString(s.etaLocked(now))
	if text, n := s.topErrorLocked(); n > 0 {
		// The server's own words, not a status code: "http_400" alone hid a
		// context too small for every request.
		fmt.Fprintf(&b, "  most errors (%d): %s", n, text)
	}
	return b.String()
}

const (
	errorTextChars = 100 // of an error's text on the progress line
	errorTextKinds = 32  // error texts a level's progress tells apart
)

// topErrorLocked is the most frequent error text and its count (s.mu held); ties
// go to the text that sorts first, so the line does not flicker between them.
func (s *levelStats) topErrorLocked() (string, int) {
	var top string
	n := 0
	for _, e := range s.errorTexts {
		if e.n > n || e.n == n && e.text < top {
			top, n = e.text, e.n
		}
	}
	return top, n
}

// errorText is one kind of failure on the progress line: its first text, and how
// many failed so.
type errorText struct {
	text string
	n    int
}

// etaLocked is the line's time part: the estimate of the time left in the level
// and the sweep while the level runs, what it took once it ended.
func (s *levelStats) etaLocked(now time.Time) string {
	took := now.Sub(s.started)
	var level time.Duration
	switch {
	case !s.ended.IsZero():
		took = s.ended.Sub(s.started)
	case s.plan.left == nil:
		return ""
	default:
		left, ok := s.plan.left(now)
		if !ok {
			return "  ETA level -"
		}
		level = max(left, 0)
	}
	var b strings.Builder
	if s.ended.IsZero() {
		fmt.Fprintf(&b, "  ETA level %s", clock(level))
	} else {
		fmt.Fprintf(&b, "  took %s", clock(took))
	}
	if s.plan.later >= 0 {
		per := s.plan.perLevel
		if per == 0 {
			per = took + level // this level's own duration, as estimated
		}
		sweep := level + time.Duration(s.plan.later)*per
		if s.plan.later > 0 || s.ended.IsZero() {
			fmt.Fprintf(&b, ", sweep %s", clock(sweep))
		}
	}
	return b.String()
}

// clock formats d as m:ss, or h:mm:ss from an hour.
func clock(d time.Duration) string {
	sec := int64(d.Round(time.Second) / time.Second)
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
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
	s.ended = time.Now()
	line := s.lineAt(s.ended)
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
