package record

import (
	"context"
	"errors"
	"time"

	"github.com/ceiling-llm/ceiling/record/internal/client"
)

// The shards of a sharded sweep compare their level windows, so each measures its
// clock against the one clock they share: the server's. HTTP's Date header has a
// resolution of one second, so one answer bounds the offset only within a second;
// watching for the moment the header's second changes bounds it by the round trip
// instead (the method of htpdate): if answer i says second s and answer i+1 says
// s+1, the server's clock passed s+1 between the sending of request i and the
// receipt of answer i+1 on the client's clock.

// clockProbeEvery spaces the Date probes; it bounds the offset's uncertainty
// together with the round trip.
const clockProbeEvery = 20 * time.Millisecond

// clockProbeFor bounds the measurement: a second change is seen within ~1 s.
const clockProbeFor = 2500 * time.Millisecond

// clockOffset is the server's clock minus the client's, and a bound of its error.
type clockOffset struct {
	Offset, Uncertainty time.Duration
}

// dater is what measureClock needs of the client.
type dater interface {
	Date(ctx context.Context, path string) (client.DateSample, error)
}

// measureClock probes path until the server's Date second changes.
func measureClock(ctx context.Context, c dater, path string) (clockOffset, error) {
	ctx, cancel := context.WithTimeout(ctx, clockProbeFor)
	defer cancel()
	prev, err := c.Date(ctx, path)
	if err != nil {
		return clockOffset{}, err
	}
	tick := time.NewTicker(clockProbeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return clockOffset{}, errors.New("the server's Date header did not change second while probed")
		case <-tick.C:
		}
		cur, err := c.Date(ctx, path)
		if err != nil {
			return clockOffset{}, err
		}
		if s := cur.Date.Sub(prev.Date); s >= time.Second && s < 2*time.Second {
			return offsetAtTick(prev, cur), nil
		}
		prev = cur
	}
}

// offsetAtTick is the offset from two answers across one second change: the
// server's clock read cur.Date exactly at a client time in [prev.Sent,
// cur.Received]; the middle of that interval is the estimate, half its width the
// bound.
func offsetAtTick(prev, cur client.DateSample) clockOffset {
	half := cur.Received.Sub(prev.Sent) / 2
	mid := prev.Sent.Add(half)
	return clockOffset{Offset: cur.Date.Sub(mid), Uncertainty: max(half, time.Nanosecond)}
}
