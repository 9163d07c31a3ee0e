package record

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/trace"
)

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
			scrapeMetrics(scrapeCtx, r.client, r.opts.MetricsURL, r.opts.ScrapeInterval, func(s []trace.MetricSample, note string) {
				r.keepMetrics("server metrics "+gpuSourceLabel(r.opts.MetricsURL), s, note)
			})
		}()
	}
	r.checkGPUExporters(ctx)
	for _, u := range r.opts.GPUMetricsURLs {
		scrapeWG.Add(1)
		go func() {
			defer scrapeWG.Done()
			source := gpuSourceLabel(u)
			scrapeMetrics(scrapeCtx, r.client, u, r.opts.ScrapeInterval, func(s []trace.MetricSample, note string) {
				for i := range s {
					s[i].Labels = withLabel(s[i].Labels, "ceiling_gpu_source", source)
				}
				r.keepMetrics("GPU exporter "+source, s, note)
			})
		}()
	}
	defer func() {
		stopScrape()
		scrapeWG.Wait()
		_ = r.sealMetrics(len(r.info.Levels))
	}()

	// In-flight requests outlive ctx by the grace period, then are abandoned.
	// The watcher is waited for on return, so it never writes a progress line
	// after the sweep has ended.
	hard, abandon := context.WithCancel(context.WithoutCancel(ctx))
	watcherDone := make(chan struct{})
	defer func() {
		abandon()
		<-watcherDone
	}()
	go func() {
		defer close(watcherDone)
		select {
		case <-ctx.Done():
			r.progress("\ninterrupted: waiting up to %s for the requests in flight (then they are recorded as cancelled)", r.opts.Grace)
			t := time.NewTimer(r.opts.Grace)
			defer t.Stop()
			select {
			case <-t.C:
				abandon()
			case <-r.opts.Abort:
				r.progress("second interrupt: stopping now; the requests in flight are recorded as cancelled")
				abandon()
			case <-hard.Done():
			}
		case <-hard.Done():
		}
	}()

	total := (len(r.opts.Concurrency) + len(r.opts.Rates) + len(r.opts.ReplaySpeeds)) * max(r.opts.Repeat, 1)
	search := r.opts.searching()
	for i := start; ; i++ {
		var (
			lv   level
			ok   bool
			step *trace.SearchStep
		)
		if search {
			// Levels sealed but not judged (a kill in between) are judged first,
			// from the parts: --resume continues to the same answer.
			if err := r.judgePending(ctx); err != nil {
				return err
			}
			lv, step, ok = r.searchNext(i)
			if !ok {
				return r.finishSearch()
			}
		} else if lv, ok = levelAt(&r.opts, i); !ok {
			r.info.StopReason = "all levels done"
			return nil
		}
		if ctx.Err() != nil {
			r.info.Interrupted = true
			r.info.StopReason = "interrupted before level " + fmt.Sprint(i)
			return ErrInterrupted
		}
		if err := r.waitForWindow(ctx, lv.index); err != nil {
			r.info.Interrupted = true
			r.info.StopReason = "interrupted before level " + fmt.Sprint(i)
			return ErrInterrupted
		}
		prepared := r.prefixCycle(ctx, lv.index)
		if prepared != "" {
			r.progress("level %d (%s): %s", lv.index, levelLabel(lv), prepared)
		}
		li, gone, failing, err := r.runLevel(ctx, hard, lv, total)
		li.PrefixCache = prepared
		if err != nil {
			// A part of the level could not be written: it is not done.
			return &sealError{level: lv.index, err: err}
		}
		li.Search = step
		if serr := r.sealLevel(li); serr != nil {
			return &sealError{level: lv.index, err: serr}
		}
		if r.opts.crashAfterLevels > 0 && len(r.info.Levels) >= r.opts.crashAfterLevels {
			return errSimulatedCrash
		}
		if strings.HasPrefix(gone, client.FileLimitText) {
			r.info.StopReason = gone
			return fmt.Errorf("%w during level %d: %s", ErrClientFileLimit, lv.index, gone)
		}
		if gone != "" {
			r.info.StopReason = "server stopped answering: " + gone
			return fmt.Errorf("%w during level %d: %s", ErrServerGone, lv.index, gone)
		}
		if ctx.Err() != nil {
			r.info.Interrupted = true
			r.info.StopReason = fmt.Sprintf("interrupted during level %d", lv.index)
			if search {
				// The level is sealed; its verdict says how far the search got.
				_ = r.judgePending(context.WithoutCancel(ctx))
			}
			return ErrInterrupted
		}
		if failing != "" && !search {
			// (A search judges such a level as failing its error criterion and
			// goes on below it.)
			// The level is kept (sealed above); the next would fail the same way.
			r.info.StopReason = fmt.Sprintf("level %d stopped: %s", lv.index, failing)
			r.progress("%s", r.info.StopReason)
			return fmt.Errorf("%w: level %d (%s): %s; the sweep stopped there, and the %d levels recorded are kept in the trace",
				ErrLevelFailed, lv.index, levelLabel(lv), failing, len(r.info.Levels))
		}
	}
}

// levelLabel is "c=N", "rate=R/s" or "replay xS".
func levelLabel(lv level) string {
	switch {
	case lv.speed > 0:
		return fmt.Sprintf("replay ×%g", lv.speed)
	case lv.rate > 0:
		return fmt.Sprintf("rate=%g/s", lv.rate)
	}
	return fmt.Sprintf("c=%d", lv.concurrency)
}
