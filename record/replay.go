package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// Trace replay (--replay FILE): production traffic exported as JSONL, one request a
// line, sent at its own timestamps, optionally faster or slower (--replay-speed).
// In ceiling's own format a line is {"timestamp": seconds, "prompt_tokens": N,
// "output_tokens": N}, with "timestamp_ms" for milliseconds, "prompt" (a text)
// instead of prompt_tokens, and "input_length" / "output_length" accepted as the
// lengths' names. Mooncake traces and AIPerf's single-turn files are read too
// (replay_formats.go).

// replayEntry is one request of a replayed trace.
type replayEntry struct {
	offset       time.Duration // after the trace's first request
	promptTokens int           // a synthetic prompt of this length, when prompt is ""
	prompt       string
	outputTokens int // 0: --output-tokens
	// hashIDs are the prompt's hashed blocks (a Mooncake trace's hash_ids): the
	// prompt is made of them, so requests that share an id share that block's text.
	hashIDs []int64
}

// loadReplay reads a replay trace of format (replayFormats; "" tells it from the
// first line), sorted by time. blockTokens is a hashed block's length (Mooncake).
func loadReplay(path, format string, blockTokens int) ([]replayEntry, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("Options.Replay: %w", err)
	}
	defer f.Close()
	return readReplay(f, path, format, blockTokens)
}

func readReplay(r io.Reader, name, format string, blockTokens int) ([]replayEntry, string, error) {
	var out []replayEntry
	var stamps []float64
	var prev float64 // the previous line's time (AIPerf's "delay" counts from it)
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			if format == "" {
				format = sniffReplayFormat(raw)
			}
			var e replayEntry
			var ts float64
			var perr error
			switch format {
			case replayCeiling:
				e, ts, perr = parseCeilingLine(raw)
			case replayMooncake:
				e, ts, perr = parseMooncakeLine(raw, blockTokens)
			case replayAIPerfSingleTurn:
				e, ts, perr = parseSingleTurnLine(raw, prev)
			default:
				return nil, "", fmt.Errorf("Options.ReplayFormat %q: want %s", format, strings.Join(replayFormats, ", "))
			}
			if perr != nil {
				return nil, "", fmt.Errorf("%s line %d (%s format): %w", name, n, format, perr)
			}
			if math.IsNaN(ts) || math.IsInf(ts, 0) {
				return nil, "", fmt.Errorf("%s line %d (%s format): the timestamp is not a finite number", name, n, format)
			}
			prev = ts
			out = append(out, e)
			stamps = append(stamps, ts)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("reading %s: %w", name, err)
		}
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("%s: no requests", name)
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return stamps[idx[a]] < stamps[idx[b]] })
	t0 := stamps[idx[0]]
	sorted := make([]replayEntry, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
		sorted[i].offset = time.Duration((stamps[j] - t0) * float64(time.Second))
	}
	return sorted, format, nil
}

// parseCeilingLine reads a line of ceiling's own format; the time is in seconds.
func parseCeilingLine(raw []byte) (replayEntry, float64, error) {
	type line struct {
		Timestamp    *float64 `json:"timestamp"`
		TimestampMs  *float64 `json:"timestamp_ms"`
		PromptTokens *int     `json:"prompt_tokens"`
		InputLength  *int     `json:"input_length"`
		Prompt       *string  `json:"prompt"`
		OutputTokens *int     `json:"output_tokens"`
		OutputLength *int     `json:"output_length"`
	}
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return replayEntry{}, 0, fmt.Errorf("not a JSON object: %v", err)
	}
	var ts float64
	switch {
	case l.Timestamp != nil && l.TimestampMs != nil:
		return replayEntry{}, 0, errors.New(`has both "timestamp" and "timestamp_ms"; want one`)
	case l.Timestamp != nil:
		ts = *l.Timestamp
	case l.TimestampMs != nil:
		ts = *l.TimestampMs / 1e3
	default:
		return replayEntry{}, 0, errors.New(`no "timestamp" (seconds) or "timestamp_ms"`)
	}
	e := replayEntry{}
	if l.PromptTokens == nil {
		l.PromptTokens = l.InputLength
	}
	switch {
	case l.Prompt != nil && l.PromptTokens != nil:
		return e, 0, errors.New(`has both "prompt" and a prompt length; want one`)
	case l.Prompt != nil:
		if *l.Prompt == "" {
			return e, 0, errors.New(`"prompt" is empty`)
		}
		e.prompt = *l.Prompt
	case l.PromptTokens != nil:
		if *l.PromptTokens < 1 {
			return e, 0, errors.New("the prompt length must be positive")
		}
		e.promptTokens = *l.PromptTokens
	default:
		return e, 0, errors.New(`want "prompt_tokens" (or "input_length") or "prompt"`)
	}
	if l.OutputTokens == nil {
		l.OutputTokens = l.OutputLength
	}
	if l.OutputTokens != nil {
		if *l.OutputTokens < 1 {
			return e, 0, errors.New("the output length must be positive")
		}
		e.outputTokens = *l.OutputTokens
	}
	return e, ts, nil
}

// replayMedianPrompt is the median synthetic prompt length of a replay (the length
// calibrated), or 64 when every prompt is a text.
func replayMedianPrompt(es []replayEntry) int {
	var ls []int
	for _, e := range es {
		if e.prompt == "" {
			ls = append(ls, e.promptTokens)
		}
	}
	if len(ls) == 0 {
		return 64
	}
	slices.Sort(ls)
	return ls[len(ls)/2]
}

// replayRate is the trace's mean request rate at speed (requests per second over
// its span; 0 for a single request).
func replayRate(es []replayEntry, speed float64) float64 {
	span := es[len(es)-1].offset.Seconds() / speed
	if span <= 0 {
		return 0
	}
	return float64(len(es)-1) / span
}

// replayPacer sends request i at start + offset_i / speed, each on its own
// goroutine; its scheduled time is that instant, however late it was sent.
type replayPacer struct {
	entries []replayEntry
	speed   float64
	start   time.Time
}

func (p replayPacer) run(stop <-chan struct{}, take func() (int64, bool), send func(int64, int32, int64)) {
	i := 0
	paceSchedule(stop, take, send, func() (time.Time, bool) {
		if i == len(p.entries) {
			return time.Time{}, false
		}
		at := p.start.Add(time.Duration(float64(p.entries[i].offset) / p.speed))
		i++
		return at, true
	})
}
