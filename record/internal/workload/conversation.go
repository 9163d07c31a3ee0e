package workload

import (
	"encoding/json"

	"github.com/ceiling-llm/ceiling/record/internal/client"
)

// Conversation is one synthetic multi-turn chat: each turn adds a user message of a
// length --prompt-tokens draws to the history, and the server's answer is appended
// before the next turn, so that every request resends the whole conversation as a
// chat client does and the server's prefix cache can reuse it.
type Conversation struct {
	w       *Workload
	id      int64 // the request id of its first turn
	turn    int
	history []json.RawMessage
	// prior is the prompt the server counted for the previous turn plus its output
	// (or the lengths asked, when it reported none): the history's length in tokens.
	prior int
}

// Conversation starts conversation id (the request id of its first turn).
func (w *Workload) Conversation(id int64) *Conversation {
	return &Conversation{w: w, id: id}
}

// Next is the prompt of the next turn, request id (draw: its index in the level,
// which the lengths are drawn from, as in Workload.Prompt), and its max_tokens. Its
// TargetTokens is the history's length plus the new message's.
func (c *Conversation) Next(id, draw int64) (client.Prompt, int) {
	c.turn++
	target := c.w.prompt.Draw(lengthRNG(c.w.seed, draw, 1))
	var text string
	if c.turn == 1 {
		text = c.w.Sized(id, target).Text // the shared prefix, if any, leads the first turn
	} else {
		text = c.w.synthetic(id, max(1, int(float64(target)/c.w.b)))
	}
	m, _ := json.Marshal(map[string]string{"role": "user", "content": text})
	c.history = append(c.history, m)
	p := client.Prompt{Messages: append([]json.RawMessage(nil), c.history...), TargetTokens: c.prior + target, KeepText: true}
	return p, c.w.output.Draw(lengthRNG(c.w.seed, draw, 2))
}

// Answer appends the server's answer to turn Turn(); promptTokens and outputTokens
// are what the server counted (-1: not reported; the target and max_tokens stand in).
func (c *Conversation) Answer(text string, target, promptTokens, maxTokens, outputTokens int) {
	m, _ := json.Marshal(map[string]string{"role": "assistant", "content": text})
	c.history = append(c.history, m)
	if promptTokens < 0 {
		promptTokens = target
	}
	if outputTokens < 0 {
		outputTokens = maxTokens
	}
	c.prior = promptTokens + outputTokens
}

// ID is the conversation's id; Turn the number of the turn last sent (from 1).
func (c *Conversation) ID() int64 { return c.id }

// Turn is the number of the turn last returned by Next (from 1).
func (c *Conversation) Turn() int { return c.turn }
