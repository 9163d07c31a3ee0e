package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/trace"
)

// The public trace formats --replay reads besides ceiling's own:
//
//   - Mooncake (kvcache-ai/Mooncake, FAST25-release/traces/*.jsonl; AIPerf's
//     --custom-dataset-type mooncake_trace): {"timestamp": ms since the trace's
//     start, "input_length": N, "output_length": N, "hash_ids": [ids]}, each hash id
//     one block of 512 prompt tokens (the last block holds the rest, 1 to 512
//     tokens, as AIPerf's prompt generator requires), a block id shared by requests
//     that share that prefix block. AIPerf also accepts "text_input" instead of
//     input_length and hash_ids.
//   - AIPerf single_turn (ai-dynamo/aiperf aiperf/dataset/loader/models.py
//     SingleTurn): {"text": "..."} or {"texts": ["...", ...]} with "timestamp" (ms)
//     or "delay" (ms after the previous line); no output length (--output-tokens).
//
// Without Options.ReplayFormat the first line tells the format: "hash_ids" or
// "text_input" is Mooncake, "text", "texts" or "delay" AIPerf single_turn, anything
// else ceiling's own (whose "timestamp" is in seconds).
const (
	replayCeiling          = "ceiling"
	replayMooncake         = "mooncake"
	replayAIPerfSingleTurn = "aiperf-single-turn"
	// mooncakeBlockTokens is the token length of one hash id in Mooncake's traces
	// (and AIPerf's default --isl-block-size).
	mooncakeBlockTokens = 512
)

// replayFormats are the values of Options.ReplayFormat ("" tells from the file).
var replayFormats = []string{replayCeiling, replayMooncake, replayAIPerfSingleTurn}

// sniffReplayFormat tells a trace's format from its first line (a line that is not
// JSON is left to ceiling's reader, which says so).
func sniffReplayFormat(raw []byte) string {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return replayCeiling
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("hash_ids") || has("text_input"):
		return replayMooncake
	case has("text") || has("texts") || has("delay"):
		return replayAIPerfSingleTurn
	}
	return replayCeiling
}

// fieldError turns a JSON decoding error into one that names the field.
func fieldError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %q: want %s, got a JSON %s", te.Field, te.Type.String(), te.Value)
	}
	return fmt.Errorf("not a JSON object: %v", err)
}

// parseMooncakeLine reads one line of a Mooncake trace; the time is returned in
// seconds.
func parseMooncakeLine(raw []byte, blockTokens int) (replayEntry, float64, error) {
	var l struct {
		Timestamp    *float64 `json:"timestamp"`
		InputLength  *int     `json:"input_length"`
		OutputLength *int     `json:"output_length"`
		HashIDs      *[]int64 `json:"hash_ids"`
		TextInput    *string  `json:"text_input"`
	}
	var e replayEntry
	if err := json.Unmarshal(raw, &l); err != nil {
		return e, 0, fieldError(err)
	}
	if l.Timestamp == nil {
		return e, 0, errors.New(`field "timestamp" is missing: want the arrival time in milliseconds since the trace's start`)
	}
	if *l.Timestamp < 0 {
		return e, 0, fmt.Errorf(`field "timestamp" %v: want milliseconds ≥ 0`, *l.Timestamp)
	}
	switch {
	case l.TextInput != nil && (l.InputLength != nil || l.HashIDs != nil):
		return e, 0, errors.New(`field "text_input" comes with "input_length"/"hash_ids": want a text or a length with its blocks, not both`)
	case l.TextInput != nil:
		if *l.TextInput == "" {
			return e, 0, errors.New(`field "text_input" is empty`)
		}
		e.prompt = *l.TextInput
	case l.InputLength == nil:
		return e, 0, errors.New(`field "input_length" is missing (or give "text_input")`)
	case *l.InputLength < 1:
		return e, 0, fmt.Errorf(`field "input_length" %d: want a positive token count`, *l.InputLength)
	case l.HashIDs == nil || len(*l.HashIDs) == 0:
		return e, 0, errors.New(`field "hash_ids" is missing or empty: a Mooncake line with "input_length" lists its prompt's blocks`)
	default:
		ids := *l.HashIDs
		lastBlock := *l.InputLength - (len(ids)-1)*blockTokens
		if lastBlock < 1 || lastBlock > blockTokens {
			return e, 0, fmt.Errorf(`fields "input_length" %d and "hash_ids" (%d blocks of %d tokens) disagree: the last block would hold %d tokens, want 1 to %d`,
				*l.InputLength, len(ids), blockTokens, lastBlock, blockTokens)
		}
		e.promptTokens, e.hashIDs = *l.InputLength, ids
	}
	if l.OutputLength != nil {
		if *l.OutputLength < 1 {
			return e, 0, fmt.Errorf(`field "output_length" %d: want a positive token count`, *l.OutputLength)
		}
		e.outputTokens = *l.OutputLength
	}
	return e, *l.Timestamp / 1e3, nil
}

// parseSingleTurnLine reads one line of an AIPerf single_turn file; prev is the
// previous line's time (seconds), which "delay" counts from and a line with
// neither time follows at once.
func parseSingleTurnLine(raw []byte, prev float64) (replayEntry, float64, error) {
	var l struct {
		Text      *string   `json:"text"`
		Texts     *[]string `json:"texts"`
		Timestamp *float64  `json:"timestamp"`
		Delay     *float64  `json:"delay"`
		Image     any       `json:"image"`
		Images    any       `json:"images"`
		Audio     any       `json:"audio"`
		Audios    any       `json:"audios"`
	}
	var e replayEntry
	if err := json.Unmarshal(raw, &l); err != nil {
		return e, 0, fieldError(err)
	}
	if l.Image != nil || l.Images != nil || l.Audio != nil || l.Audios != nil {
		return e, 0, errors.New(`fields "image"/"audio": only text prompts are replayed`)
	}
	switch {
	case l.Text != nil && l.Texts != nil:
		return e, 0, errors.New(`fields "text" and "texts" cannot be set together`)
	case l.Text != nil:
		e.prompt = *l.Text
	case l.Texts != nil:
		e.prompt = strings.Join(*l.Texts, "\n")
	}
	if strings.TrimSpace(e.prompt) == "" {
		return e, 0, errors.New(`field "text" (or "texts") is missing or empty`)
	}
	ts := prev
	switch {
	case l.Timestamp != nil && l.Delay != nil:
		return e, 0, errors.New(`fields "timestamp" and "delay" cannot be set together`)
	case l.Timestamp != nil:
		if *l.Timestamp < 0 {
			return e, 0, fmt.Errorf(`field "timestamp" %v: want milliseconds ≥ 0`, *l.Timestamp)
		}
		ts = *l.Timestamp / 1e3
	case l.Delay != nil:
		if *l.Delay < 0 {
			return e, 0, fmt.Errorf(`field "delay" %v: want milliseconds ≥ 0`, *l.Delay)
		}
		ts = prev + *l.Delay/1e3
	}
	return e, ts, nil
}

// replayPrefix is the shared-block structure of a replay whose requests carry
// hashed blocks (nil when none does): per request in send order, its prefix group
// and how many leading blocks an earlier request already sent, as a prefix cache
// matches them (a chain of blocks from the first: a block shared after a differing
// one is not a prefix hit).
func replayPrefix(es []replayEntry, format string, blockTokens int) *trace.ReplayPrefix {
	hashed := false
	for _, e := range es {
		hashed = hashed || len(e.hashIDs) > 0
	}
	if !hashed {
		return nil
	}
	p := &trace.ReplayPrefix{Format: format, BlockTokens: blockTokens, Requests: len(es),
		Group: make([]int32, len(es)), SharedPrefixBlocks: make([]int32, len(es))}
	type edge struct {
		parent int32
		id     int64
	}
	trie := map[edge]int32{} // a prefix of blocks → its node
	seen := map[int64]bool{}
	groups := map[int64]int32{} // first block → the first request that sent it
	for i, e := range es {
		p.Group[i] = -1
		if len(e.hashIDs) == 0 {
			continue
		}
		if g, ok := groups[e.hashIDs[0]]; ok {
			p.Group[i] = g
		} else {
			groups[e.hashIDs[0]] = int32(i)
			p.Group[i] = int32(i)
		}
		node, matching := int32(0), true
		for _, id := range e.hashIDs {
			p.Blocks++
			if seen[id] {
				p.SharedBlockRefs++
			} else {
				seen[id] = true
			}
			k := edge{node, id}
			next, ok := trie[k]
			if ok && matching {
				p.SharedPrefixBlocks[i]++
			} else {
				matching = false
			}
			if !ok {
				next = int32(len(trie) + 1)
				trie[k] = next
			}
			node = next
		}
	}
	p.UniqueBlocks = len(seen)
	p.PrefixGroups = len(groups)
	return p
}
