package shard

import (
	"fmt"
	"time"
)

// Schedule is the wall-clock plan every shard follows, so that level k runs in the
// same window on every client without a coordinator: it starts at
// Start + k × (Level + Gap) and sends for Level. The gap leaves time for the
// requests still in flight at a level's end to finish before the next one starts.
type Schedule struct {
	Start time.Time
	Level time.Duration
	Gap   time.Duration
}

// DefaultGap is the pause between scheduled levels when none is given.
const DefaultGap = 30 * time.Second

// Window is level k's scheduled start and end of sending.
func (s Schedule) Window(k int) (start, end time.Time) {
	start = s.Start.Add(time.Duration(k) * (s.Level + s.Gap))
	return start, start.Add(s.Level)
}

// Validate checks that the schedule can be followed.
func (s Schedule) Validate() error {
	switch {
	case s.Start.IsZero():
		return nil
	case s.Level <= 0:
		return fmt.Errorf("a schedule start (%s) needs a fixed level duration", s.Start.Format(time.RFC3339))
	case s.Gap < 0:
		return fmt.Errorf("schedule gap %s: must not be negative", s.Gap)
	}
	return nil
}
