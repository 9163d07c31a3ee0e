package record

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ceiling-llm/ceiling/record/trace"
)

// pending holds the rows of the level in flight, sealed every PartRows rows.
type pending struct {
	mu   sync.Mutex
	rows []trace.Row
}

// runLevel runs one level. gone is non-empty when the server stopped answering.
func (r *recorder) runLevel(ctx, hard context.Context, lv level, total int) (trace.LevelInfo, string, error) {
	o := r.opts
	li := trace.LevelInfo{Level: lv.index, Concurrency: lv.concurrency, Rate: lv.rate, Started: time.Now().UTC()}
	cpu0 := cpuTime()
	wall0 := time.Now()

	count := o.Warmup + o.RequestsPerLevel // 0 in duration mode (until the deadline)
	var deadline time.Time
	if o.DurationPerLevel > 0 {
		count = 0
		deadline = wall0.Add(o.DurationPerLevel)
	}
	baseID := r.nextID

	stats := newLevelStats(lv, count, total, o.Progress, o.Live)
	var pend pending
	var sealErr error
	var sealMu sync.Mutex
	add := func(row trace.Row) {
		stats.add(&row)
		pend.mu.Lock()
		pend.rows = append(pend.rows, row)
		var full []trace.Row
		if len(pend.rows) >= o.PartRows {
			full, pend.rows = pend.rows, nil
		}
		pend.mu.Unlock()
		if full != nil {
			sealMu.Lock()
			if err := r.parts.SealRows(lv.index, full, r.info); err != nil && sealErr == nil {
				sealErr = err
			}
			sealMu.Unlock()
		}
	}

	// Consecutive connection failures mean the server is gone: stop the level.
	var connFails atomic.Int64
	var goneMsg atomic.Value
	stopLevel, cancelLevel := context.WithCancel(ctx)
	defer cancelLevel()
	goneAfter := int64(max(8, 2*max(lv.concurrency, 1)))

	var issued atomic.Int64
	// take reserves the next request index, or says the level is done sending.
	take := func() (int64, bool) {
		if stopLevel.Err() != nil {
			return 0, false
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return 0, false
		}
		idx := issued.Add(1) - 1
		if count > 0 && idx >= int64(count) {
			return 0, false
		}
		return idx, true
	}
	do := func(idx int64, worker int32, scheduled int64) {
		id := baseID + idx
		prompt, maxTokens := r.workload.Prompt(id)
		prompt.RequestID = RequestHeaderID(r.info.RunID, id)
		res := r.client.Do(hard, prompt, maxTokens)
		row := trace.Row{
			RunID:              r.info.RunID,
			Level:              int32(lv.index),
			Concurrency:        int32(lv.concurrency),
			Rate:               lv.rate,
			RequestID:          id,
			Worker:             worker,
			Warmup:             idx < int64(o.Warmup),
			TargetPromptTokens: int32(prompt.TargetTokens),
			MaxTokens:          int32(maxTokens),
		}
		fillRow(&row, &res)
		row.ScheduledNs = row.SentNs
		if scheduled != 0 {
			row.ScheduledNs = scheduled
		}
		if res.Conn {
			if connFails.Add(1) >= goneAfter {
				goneMsg.CompareAndSwap(nil, res.Err)
				cancelLevel()
			}
		} else if res.Status != 0 {
			connFails.Store(0)
		}
		add(row)
	}

	var wg sync.WaitGroup
	if lv.rate > 0 {
		// Open loop: Poisson arrivals, each request on its own goroutine.
		rng := rand.New(rand.NewPCG(o.Seed, uint64(lv.index)+1<<32))
		next := wall0
		for {
			next = next.Add(time.Duration(rng.ExpFloat64() / lv.rate * float64(time.Second)))
			if !deadline.IsZero() && !next.Before(deadline) {
				break
			}
			if d := time.Until(next); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-stopLevel.Done():
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
				do(idx, 0, scheduled)
			}(idx, next.UnixNano())
		}
	} else {
		for w := range lv.concurrency {
			wg.Add(1)
			go func(worker int32) {
				defer wg.Done()
				for {
					idx, ok := take()
					if !ok {
						return
					}
					do(idx, worker, 0)
				}
			}(int32(w))
		}
	}
	wg.Wait()
	stats.finish()

	n := issued.Load()
	if count > 0 {
		n = min(n, int64(count))
	}
	r.nextID = baseID + n

	pend.mu.Lock()
	rest := pend.rows
	pend.rows = nil
	pend.mu.Unlock()
	li.Ended = time.Now().UTC()
	li.Requests, li.Errors = stats.measured, stats.errors
	li.OutputTokS = stats.outputTokS()
	wall := time.Since(wall0).Seconds()
	if wall > 0 {
		li.ClientCPUUtil = (cpuTime() - cpu0).Seconds() / (wall * float64(runtime.NumCPU()))
	}
	if lv.rate > 0 {
		li.SendLagP99S = stats.sendLagP99()
	}
	gone, _ := goneMsg.Load().(string)
	switch {
	case gone != "":
		li.StopReason = "server stopped answering"
	case ctx.Err() != nil:
		li.StopReason = "interrupted"
	}
	// The level's last rows are sealed by the caller together with its LevelInfo.
	r.lastRows = rest
	if sealErr != nil {
		return li, gone, sealErr
	}
	return li, gone, nil
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
