package record

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ceiling-llm/ceiling/record/trace"
)

// level is one step of the sweep.
type level struct {
	index       int
	concurrency int
	rate        float64
}

// levelAt returns the i-th level of a fixed plan (ok false past the end).
func (r *recorder) levelAt(i int) (level, bool) {
	switch {
	case len(r.opts.Rates) > 0:
		if i >= len(r.opts.Rates) {
			return level{}, false
		}
		return level{index: i, rate: r.opts.Rates[i]}, true
	case r.opts.Auto:
		c := 1 << i
		return level{index: i, concurrency: c}, true
	default:
		if i >= len(r.opts.Concurrency) {
			return level{}, false
		}
		return level{index: i, concurrency: r.opts.Concurrency[i]}, true
	}
}

// autoCap is the largest level --concurrency auto may run: twice what the revealed
// KV capacity holds at the workload's length, else MaxAutoConcurrency.
func (r *recorder) autoCap() (int, string) {
	if r.kvCap > 0 {
		per := int64(r.opts.PromptTokens + r.opts.OutputTokens)
		if per <= 0 {
			per = int64(r.opts.OutputTokens) + 1
		}
		holds := max(1, int(r.kvCap/per))
		return 2 * holds, fmt.Sprintf("2× the %d requests the server's KV cache (%d tokens) holds at %d tokens each", holds, r.kvCap, per)
	}
	return r.opts.MaxAutoConcurrency, fmt.Sprintf("the maximum of %d", r.opts.MaxAutoConcurrency)
}

// sweep runs the levels from start, sealing each, until the plan ends, the auto
// rule stops it, the server goes away or ctx is cancelled.
func (r *recorder) sweep(ctx context.Context, start int) error {
	// Metrics are scraped for the whole sweep.
	scrapeCtx, stopScrape := context.WithCancel(context.WithoutCancel(ctx))
	var scrapeWG sync.WaitGroup
	if r.opts.MetricsURL != "" {
		scrapeWG.Add(1)
		go func() {
			defer scrapeWG.Done()
			scrapeMetrics(scrapeCtx, r.client, r.opts.MetricsURL, r.opts.ScrapeInterval, func(s []trace.MetricSample) {
				r.metricsMu.Lock()
				r.metrics = append(r.metrics, s...)
				r.metricsMu.Unlock()
			})
		}()
	}
	defer func() {
		stopScrape()
		scrapeWG.Wait()
		_ = r.sealMetrics(len(r.info.Levels))
	}()

	// In-flight requests outlive ctx by the grace period, then are abandoned.
	hard, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	go func() {
		select {
		case <-ctx.Done():
			r.progress("\ninterrupted: waiting up to %s for the requests in flight (then they are recorded as cancelled)", r.opts.Grace)
			t := time.NewTimer(r.opts.Grace)
			defer t.Stop()
			select {
			case <-t.C:
				abandon()
			case <-hard.Done():
			}
		case <-hard.Done():
		}
	}()

	capLevel, capWhy := r.autoCap()
	var prevTput float64
	var prevConc int
	if start > 0 && len(r.info.Levels) > 0 {
		last := r.info.Levels[len(r.info.Levels)-1]
		prevTput, prevConc = last.OutputTokS, last.Concurrency
	}
	total := len(r.opts.Concurrency) + len(r.opts.Rates)
	for i := start; ; i++ {
		lv, ok := r.levelAt(i)
		if !ok {
			r.info.StopReason = "all levels done"
			return nil
		}
		if r.opts.Auto && lv.concurrency > capLevel {
			r.info.StopReason = fmt.Sprintf("auto: stopped before c=%d, above %s", lv.concurrency, capWhy)
			r.progress("%s", r.info.StopReason)
			return nil
		}
		if ctx.Err() != nil {
			r.info.Interrupted = true
			r.info.StopReason = "interrupted before level " + fmt.Sprint(i)
			return ErrInterrupted
		}
		li, gone, err := r.runLevel(ctx, hard, lv, total)
		r.info.Levels = append(r.info.Levels, li)
		if serr := r.sealLevel(lv.index); serr != nil {
			return serr
		}
		if err != nil {
			return err
		}
		if r.opts.crashAfterLevels > 0 && len(r.info.Levels) >= r.opts.crashAfterLevels {
			return errSimulatedCrash
		}
		if gone != "" {
			r.info.StopReason = "server stopped answering: " + gone
			return fmt.Errorf("%w during level %d: %s", ErrServerGone, lv.index, gone)
		}
		if ctx.Err() != nil {
			r.info.Interrupted = true
			r.info.StopReason = fmt.Sprintf("interrupted during level %d", lv.index)
			return ErrInterrupted
		}
		if r.opts.Auto {
			measured := li.Requests
			if measured > 0 && float64(li.Errors)/float64(measured) > 0.05 {
				r.info.StopReason = fmt.Sprintf("auto: errors above 5%% at c=%d (%d of %d)", lv.concurrency, li.Errors, measured)
				r.progress("%s", r.info.StopReason)
				return nil
			}
			if prevConc > 0 && li.OutputTokS < 1.05*prevTput {
				r.info.StopReason = fmt.Sprintf("auto: throughput rose less than 5%% from c=%d (%.1f tok/s) to c=%d (%.1f tok/s)",
					prevConc, prevTput, lv.concurrency, li.OutputTokS)
				r.progress("%s", r.info.StopReason)
				return nil
			}
			prevTput, prevConc = li.OutputTokS, lv.concurrency
		}
	}
}
