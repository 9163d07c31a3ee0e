package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"time"
)

// Trace replay (--replay FILE): production traffic exported as JSONL, one request a
// line, sent at its own timestamps, optionally faster or slower (--replay-speed).
// A line is {"timestamp": seconds, "prompt_tokens": N, "output_tokens": N}, with
// "timestamp_ms" for milliseconds, "prompt" (a text) instead of prompt_tokens, and
// "input_length" / "output_length" accepted as the lengths' names.

// replayEntry is one request of a replayed trace.
type replayEntry struct {
	offset       time.Duration // after the trace's first request
	promptTokens int           // a synthetic prompt of this length, when prompt is ""
	prompt       string
	outputTokens int // 0: --output-tokens
}

// loadReplay reads a replay trace, sorted by time.
func loadReplay(path string) ([]replayEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("Options.Replay: %w", err)
	}
	defer f.Close()
	return readReplay(f, path)
}

func readReplay(r io.Reader, name string) ([]replayEntry, error) {
	type line struct {
		Timestamp    *float64 `json:"timestamp"`
		TimestampMs  *float64 `json:"timestamp_ms"`
		PromptTokens *int     `json:"prompt_tokens"`
		InputLength  *int     `json:"input_length"`
		Prompt       *string  `json:"prompt"`
		OutputTokens *int     `json:"output_tokens"`
		OutputLength *int     `json:"output_length"`
	}
	var out []replayEntry
	var stamps []float64
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			var l line
			if jerr := json.Unmarshal(raw, &l); jerr != nil {
				return nil, fmt.Errorf("%s line %d: not a JSON object: %v", name, n, jerr)
			}
			bad := func(msg string) error { return fmt.Errorf("%s line %d: %s", name, n, msg) }
			var ts float64
			switch {
			case l.Timestamp != nil && l.TimestampMs != nil:
				return nil, bad(`has both "timestamp" and "timestamp_ms"; want one`)
			case l.Timestamp != nil:
				ts = *l.Timestamp
			case l.TimestampMs != nil:
				ts = *l.TimestampMs / 1e3
			default:
				return nil, bad(`no "timestamp" (seconds) or "timestamp_ms"`)
			}
			if math.IsNaN(ts) || math.IsInf(ts, 0) {
				return nil, bad("the timestamp is not a finite number")
			}
			e := replayEntry{}
			if l.PromptTokens == nil {
				l.PromptTokens = l.InputLength
			}
			switch {
			case l.Prompt != nil && l.PromptTokens != nil:
				return nil, bad(`has both "prompt" and a prompt length; want one`)
			case l.Prompt != nil:
				if *l.Prompt == "" {
					return nil, bad(`"prompt" is empty`)
				}
				e.prompt = *l.Prompt
			case l.PromptTokens != nil:
				if *l.PromptTokens < 1 {
					return nil, bad("the prompt length must be positive")
				}
				e.promptTokens = *l.PromptTokens
			default:
				return nil, bad(`want "prompt_tokens" (or "input_length") or "prompt"`)
			}
			if l.OutputTokens == nil {
				l.OutputTokens = l.OutputLength
			}
			if l.OutputTokens != nil {
				if *l.OutputTokens < 1 {
					return nil, bad("the output length must be positive")
				}
				e.outputTokens = *l.OutputTokens
			}
			out = append(out, e)
			stamps = append(stamps, ts)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no requests", name)
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
	return sorted, nil
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
