package record

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ceiling-llm/ceiling/levelrule"
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/trace"
)

// levelRun is the state of one level while it runs: which requests are issued,
// the rows not yet sealed, and whether the server still answers. Its send is the
// one request path of both arrival strategies.
type levelRun struct {
	r      *recorder
	lv     level
	hard   context.Context // in-flight requests (outlives an interrupt by the grace)
	stop   context.Context // the level: cancelled when the server is gone
	cancel context.CancelFunc
	count  int // requests to issue (0 in duration mode)
	// rateCapped: an open-loop level's steady state does not fit in
	// --max-level-duration, so the cap, not the steady state, ends it.
	rateCapped bool
	deadline   time.Time   // no request issued after it (zero in count mode)
	sizer      *levelSizer // default level size (sizing.go); nil with a count or duration
	baseID     int64
	stats      *levelStats
	// workerBase numbers this shard's workers after the other shards' (0 unsharded).
	workerBase int32

	issued atomic.Int64

	mu      sync.Mutex
	pending []trace.Row // rows not yet sealed
	rows    int         // rows recorded, sealed or pending
	sealMu  sync.Mutex
	sealErr error

	// Consecutive connection failures mean the server is gone: stop the level.
	connFails atomic.Int64
	goneAfter int64
	goneMsg   atomic.Value // string: the failure that decided it

	// A level whose first goneAfter requests all failed (every one refused with
	// the same HTTP 400, say) stops: the rest would fail too.
	succeeded atomic.Int64
	failed    atomic.Int64
	failMsg   atomic.Value // string: the first failure
}

// take reserves the next request index, or says the level is done sending.
func (l *levelRun) take() (int64, bool) {
	if l.stop.Err() != nil {
		return 0, false
	}
	if !l.deadline.IsZero() && !time.Now().Before(l.deadline) {
		return 0, false
	}
	if l.sizer != nil && l.sizer.enough(time.Now()) {
		return 0, false
	}
	idx := l.issued.Add(1) - 1
	if l.count > 0 && idx >= int64(l.count) {
		return 0, false
	}
	return idx, true
}

// send runs request idx of the level and records its row. scheduled is the
// request's arrival time (0: when it was sent, closed loop).
func (l *levelRun) send(idx int64, worker int32, scheduled int64) {
	prompt, maxTokens := l.r.request(l.baseID+idx, idx)
	row, _ := l.exchange(idx, worker, scheduled, prompt, maxTokens)
	l.add(row)
}

// exchange sends one request and returns its row (not yet added) and result.
func (l *levelRun) exchange(idx int64, worker int32, scheduled int64, prompt client.Prompt, maxTokens int) (trace.Row, client.Result) {
	r := l.r
	id := l.baseID + idx
	prompt.RequestID = RequestHeaderID(r.info.RunID, id)
	prompt.MinTokens = r.minTokens
	res := r.client.Do(l.hard, prompt, maxTokens)
	row := trace.Row{
		RunID:              r.info.RunID,
		Level:              int32(l.lv.index),
		Concurrency:        int32(l.lv.concurrency),
		Rate:               l.lv.rate,
		RequestID:          id,
		Worker:             l.workerBase + worker,
		Warmup:             idx < int64(r.opts.Warmup),
		TargetPromptTokens: int32(prompt.TargetTokens),
		MaxTokens:          int32(maxTokens),
	}
	if w := fillRow(&row, &res); w != "" {
		r.warn(fmt.Sprintf("request %d (X-Request-Id %s): %s", id, prompt.RequestID, w))
	}
	row.ScheduledNs = row.SentNs
	if scheduled != 0 {
		row.ScheduledNs = scheduled
	}
	if res.Err == "" && res.Status/100 == 2 {
		l.succeeded.Add(1)
	} else if res.Err != "" && l.hard.Err() == nil {
		l.failMsg.CompareAndSwap(nil, res.Err)
		if l.failed.Add(1) >= l.goneAfter && l.succeeded.Load() == 0 {
			l.cancel()
		}
	}
	if res.ClientLimit {
		// More requests would fail the same way: stop the level; the sweep says why.
		l.goneMsg.CompareAndSwap(nil, res.Err)
		l.cancel()
	} else if res.Conn {
		if l.connFails.Add(1) >= l.goneAfter {
			l.goneMsg.CompareAndSwap(nil, res.Err)
			l.cancel()
		}
	} else if res.Status != 0 {
		l.connFails.Store(0)
	}
	return row, res
}

// add keeps a row, sealing a part every PartRows rows.
func (l *levelRun) add(row trace.Row) {
	l.stats.add(&row)
	if l.sizer != nil {
		l.sizer.observe(&row)
	}
	l.mu.Lock()
	l.pending = append(l.pending, row)
	l.rows++
	var full []trace.Row
	if len(l.pending) >= l.r.opts.PartRows {
		full, l.pending = l.pending, nil
	}
	l.mu.Unlock()
	if full != nil {
		l.sealMu.Lock()
		if err := l.r.parts.SealRows(l.lv.index, full, l.r.info); err != nil && l.sealErr == nil {
			l.sealErr = err
		}
		l.sealMu.Unlock()
	}
}

// runLevel runs one level. gone is non-empty when the server stopped answering,
// failing when every request of the level failed (it was stopped early).
func (r *recorder) runLevel(ctx, hard context.Context, lv level, total int) (li trace.LevelInfo, gone, failing string, err error) {
	o := r.opts
	if lv.speed > 0 {
		lv.rate = replayRate(r.replay, lv.speed)
	}
	li = trace.LevelInfo{Level: lv.index, Concurrency: lv.concurrency, Rate: lv.rate, Repeat: lv.repeat, Started: time.Now().UTC()}
	cpu0 := cpuTime()
	wall0 := time.Now()

	scale := max(lv.scale, 1) // a search's rerun of an invalid level, longer
	// A shard runs its share of the level (package shard); its rows keep the whole
	// level's concurrency and rate, the target the merged level is judged against.
	workers, rate := lv.concurrency, lv.rate
	if o.Shard.Sharded() {
		workers, rate = o.Shard.Workers(lv.concurrency), o.Shard.Rate(lv.rate)
		li.Workers, li.WorkerRate = workers, rate
	}
	l := &levelRun{r: r, lv: lv, hard: hard, baseID: r.nextID,
		count:      o.Warmup + o.RequestsPerLevel*scale, // 0 in duration mode (until the deadline)
		goneAfter:  int64(max(8, 2*max(workers, 1))),
		workerBase: int32(o.Shard.WorkerBase(lv.concurrency))}
	if o.DurationPerLevel > 0 {
		l.count = 0
		l.deadline = wall0.Add(o.DurationPerLevel * time.Duration(scale))
		if scale == 1 {
			l.deadline = r.levelDeadline(lv.index, wall0) // its window, on a schedule
		}
	}
	switch {
	case lv.duration > 0:
		l.count = 0
		l.deadline = wall0.Add(lv.duration)
	case lv.speed > 0:
		l.count = len(r.replay)
	case o.defaultSize():
		// Sized by sizing.go's rule: warm-up requests still come first by index.
		l.count = 0
		maxDur := o.MaxLevelDuration * time.Duration(scale)
		steady := levelrule.SteadyState
		if o.steadyState > 0 {
			steady = o.steadyState
		}
		steady *= time.Duration(scale)
		if lv.rate > 0 {
			want := steady + time.Duration(float64(o.Warmup)/lv.rate*float64(time.Second))
			l.deadline = wall0.Add(min(want, maxDur))
			l.rateCapped = want > maxDur
		} else {
			l.sizer = newLevelSizer(workers, wall0, maxDur) // this shard's workers: each shard sizes its share
			l.sizer.steady = steady
			if o.Auto {
				// A search's SLO percentile needs its requests in one run, not in
				// reruns: p95 needs 20, p99 100.
				l.sizer.minDone = o.tailNeed()
			}
		}
	}
	l.stop, l.cancel = context.WithCancel(ctx)
	defer l.cancel()
	l.stats = newLevelStats(lv, l.count, total, o.Progress, o.Live)
	l.stats.setPlan(r.levelPlan(l, lv, total, wall0))

	var arr arrivals = closedLoop{workers: workers}
	switch {
	case lv.speed > 0:
		arr = replayPacer{entries: r.replay, speed: lv.speed, start: wall0}
	case lv.rate > 0:
		arr = newGamma(o.workloadSeed(), lv.index, rate, o.Burstiness, wall0, l.deadline)
	case o.Turns > 1:
		arr = conversations{l: l, workers: workers, turns: o.Turns, think: o.ThinkTime}
	}
	arr.run(l.stop.Done(), l.take, l.send)
	l.stats.finish()

	n := l.issued.Load()
	if l.count > 0 {
		n = min(n, int64(l.count))
	}
	r.nextID = l.baseID + n

	li.Ended = time.Now().UTC()
	li.Requests, li.Errors = l.stats.measured, l.stats.errors
	li.OutputTokS = l.stats.outputTokS()
	wall := time.Since(wall0).Seconds()
	if wall > 0 {
		li.ClientCPUUtil = (cpuTime() - cpu0).Seconds() / (wall * float64(runtime.NumCPU()))
	}
	if lv.rate > 0 {
		li.SendLagP99S = l.stats.sendLagP99()
	}
	gone, _ = l.goneMsg.Load().(string)
	if gone == "" && l.succeeded.Load() == 0 && l.failed.Load() >= l.goneAfter {
		failing, _ = l.failMsg.Load().(string)
		failing = fmt.Sprintf("the first %d requests all failed, the first with: %s", l.failed.Load(), failing)
	}
	switch {
	case gone != "":
		li.StopReason = "server stopped answering"
	case failing != "":
		li.StopReason = "stopped: " + failing
	case ctx.Err() != nil:
		li.StopReason = "interrupted (Ctrl-C or a signal) before the level finished"
	case l.sizer != nil && l.sizer.stoppedByCap(), l.rateCapped:
		li.StopReason = fmt.Sprintf("stopped at --max-level-duration %s before the level's steady state met the validity rule", o.MaxLevelDuration)
	}
	// The level's last rows are sealed by the caller together with its LevelInfo.
	l.mu.Lock()
	r.lastRows, l.pending = l.pending, nil
	li.Rows = l.rows
	l.mu.Unlock()
	return li, gone, failing, l.sealErr
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
