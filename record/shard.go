package record

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// What a recorder does differently as one shard of a sweep split across several
// clients (package shard has the rules; docs/sharding.md the recipe).

// workloadSeed is the seed this recorder draws its workload from: the sweep's
// seed, split per shard so that no two shards send the same prompts.
func (o *Options) workloadSeed() uint64 { return o.Shard.Seed(o.Seed) }

// shardInfo is the run info's shard part: nil for a recording that is neither
// sharded nor scheduled.
func (r *recorder) shardInfo(ctx context.Context) *trace.ShardInfo {
	o := r.opts
	if !o.Shard.Sharded() && o.Schedule.Start.IsZero() {
		return nil
	}
	si := &trace.ShardInfo{Index: o.Shard.Index, Count: max(o.Shard.Count, 1),
		StartAt: o.Schedule.Start, GapS: o.Schedule.Gap.Seconds()}
	off, err := measureClock(ctx, r.client, "/v1/models")
	if err != nil {
		r.warn(fmt.Sprintf("clock against the server not measured (%v): the merge compares this shard's level windows as its own clock reads them", err))
		return si
	}
	si.ClockOffsetNs, si.ClockUncertaintyNs = int64(off.Offset), int64(off.Uncertainty)
	r.progress("shard %s: server clock %+.3f s from this client's (±%.3f s)", o.Shard, off.Offset.Seconds(), off.Uncertainty.Seconds())
	return si
}

// levelDeadline is when level index stops sending: its window's end on a
// schedule, else its fixed duration after it started.
func (r *recorder) levelDeadline(index int, started time.Time) time.Time {
	o := r.opts
	if o.Schedule.Start.IsZero() {
		return started.Add(o.DurationPerLevel)
	}
	_, end := r.scheduleWindow(index)
	if end.Sub(started) < o.DurationPerLevel/2 {
		// Too late for its window: the level still runs long enough to be measured,
		// and the merge names the shard as late.
		return started.Add(o.DurationPerLevel)
	}
	return end
}

// scheduleWindow is level index's window on this recorder's clock: the schedule
// is on the server's clock when the offset was measured.
func (r *recorder) scheduleWindow(index int) (start, end time.Time) {
	start, end = r.opts.Schedule.Window(index)
	if s := r.info.Shard; s != nil && s.ClockUncertaintyNs > 0 {
		d := time.Duration(s.ClockOffsetNs)
		start, end = start.Add(-d), end.Add(-d)
	}
	return start, end
}

// waitForWindow waits until level index's scheduled start (none without a
// schedule), and says so when the level starts late.
func (r *recorder) waitForWindow(ctx context.Context, index int) error {
	if r.opts.Schedule.Start.IsZero() {
		return nil
	}
	start, _ := r.scheduleWindow(index)
	wait := time.Until(start)
	if wait < -time.Second {
		r.warn(fmt.Sprintf("level %d started %.1f s after its scheduled start %s", index, -wait.Seconds(), start.UTC().Format(time.RFC3339)))
		return nil
	}
	if wait <= 0 {
		return nil
	}
	r.progress("level %d: waiting %.0f s for its scheduled start %s", index, wait.Seconds(), start.UTC().Format(time.RFC3339))
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// shardName names a run's shard for messages.
func shardName(s *trace.ShardInfo) string {
	if s == nil || s.Count <= 1 {
		return "not sharded"
	}
	return fmt.Sprintf("shard %d/%d", s.Index, s.Count)
}

// sharedSeed is the seed of a sharded sweep given none: the same on every shard
// of the run, another for every run (never 0, which means "none given").
func sharedSeed(runID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(runID))
	return max(h.Sum64(), 1)
}
