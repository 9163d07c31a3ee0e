package record

import (
	"fmt"
	"time"

	"github.com/ceiling-llm/ceiling/levelrule"
)

// levelPlan is the progress line's target of level l (started at start) and how it
// estimates the time left: a count's from the completion rate so far, a duration's
// from its deadline, the default size's from its rule (levelSizer.left); the sweep's
// from the levels still to run at the mean duration of those recorded.
func (r *recorder) levelPlan(l *levelRun, lv level, total int, start time.Time) levelPlan {
	p := levelPlan{later: -1}
	if total > 0 {
		p.later = max(total-lv.index-1, 0)
	}
	var sum time.Duration
	for _, li := range r.info.Levels {
		sum += li.Ended.Sub(li.Started)
	}
	if n := len(r.info.Levels); n > 0 {
		p.perLevel = sum / time.Duration(n)
	}
	switch {
	case l.count > 0:
		p.target = fmt.Sprintf("target %d req", l.count)
		p.left = func(now time.Time) (time.Duration, bool) {
			done := l.stats.done // read under the stats lock, which lineAt holds
			if done == 0 {
				return 0, false
			}
			return time.Duration(float64(now.Sub(start)) / float64(done) * float64(l.count-done)), true
		}
	case !l.deadline.IsZero():
		p.target = fmt.Sprintf("target %s", l.deadline.Sub(start).Round(time.Second))
		p.left = func(now time.Time) (time.Duration, bool) { return l.deadline.Sub(now), true }
	case l.sizer != nil:
		p.target = fmt.Sprintf("target ≥%d req in ≥%s steady", levelrule.SizedCompletions(l.sizer.workers), l.sizer.steady.Round(time.Millisecond))
		p.left = l.sizer.left
	}
	return p
}
