package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/record"
	"github.com/ceiling-llm/ceiling/shard"
	"github.com/spf13/pflag"
)

// shardOptions fills the sharding part of record's options from --shard (or a
// Kubernetes Indexed Job's environment), --start-at, --schedule-gap and --run-id.
func shardOptions(e env, fs *pflag.FlagSet, o *record.Options, shardFlag, startAt string, gap time.Duration, runID string, usageErr func(string) int) (int, bool) {
	var sp shard.Spec
	if shardFlag != "" {
		// An explicit --shard wins over the environment, which an Indexed Job sets
		// whether or not the flag is given; a difference is said, not refused.
		var err error
		if sp, err = shard.Parse(shardFlag); err != nil {
			return usageErr("--shard: " + err.Error()), false
		}
		if d := shard.Disagreement(sp, e.getenv); d != "" {
			fmt.Fprintf(e.stderr, "warning: --shard %s is used, but the environment says %s (a Kubernetes Indexed Job's): the flag wins; check that each pod runs its own shard\n", sp, d)
		}
	} else {
		env, fromEnv, err := shard.FromEnv(e.getenv)
		if err != nil {
			return usageErr(err.Error()), false
		}
		if fromEnv {
			sp = env
		}
	}
	o.Shard = sp
	// {shard} in -o is the shard's index; a run that is not split is shard 0 of 1,
	// so the same -o serves a one-pod Job and a local run.
	o.Output = strings.ReplaceAll(o.Output, "{shard}", fmt.Sprint(sp.Index))
	if startAt != "" {
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(startAt))
		if err != nil {
			return usageErr(fmt.Sprintf("--start-at %q: want an RFC 3339 time such as 2026-12-02T10:00:00Z", startAt)), false
		}
		o.Schedule = shard.Schedule{Start: t, Level: o.DurationPerLevel, Gap: gap}
	}
	if fs.Changed("schedule-gap") && startAt == "" {
		return usageErr("--schedule-gap needs --start-at"), false
	}
	o.RunID = runID
	if !sp.Sharded() {
		return 0, true
	}
	if o.RunID == "" {
		if o.Schedule.Start.IsZero() {
			return usageErr("a shard needs --run-id or --start-at: the shards of one sweep must share a run id (--start-at derives it from the start time)"), false
		}
		o.RunID = "sharded-" + o.Schedule.Start.UTC().Format("20060102T150405Z")
	}
	// One scraper: counters scraped by every shard would be stored N times.
	if sp.Index > 0 && !fs.Changed("metrics-url") {
		o.MetricsURL = "off"
	}
	return 0, true
}
