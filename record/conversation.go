package record

import (
	"time"

	"github.com/ceiling-llm/ceiling/record/internal/workload"
)

// conversations is the closed loop of --turns: each worker runs a conversation of
// turns requests, each sending the whole history so far (the previous answers
// included), then starts the next. A failed turn ends its conversation: a chat
// client would not go on from an answer it never got.
type conversations struct {
	l       *levelRun
	workers int
	turns   int
	think   time.Duration // pause between a conversation's turns
}

func (c conversations) run(stop <-chan struct{}, take func() (int64, bool), _ func(int64, int32, int64)) {
	eachWorker(c.workers, func(worker int32) {
		for {
			var conv *workload.Conversation
			for turn := 1; turn <= c.turns; turn++ {
				if turn > 1 {
					sleepFor(c.think, stop)
				}
				idx, ok := take()
				if !ok {
					return
				}
				if turn == 1 {
					conv = c.l.r.workload.Conversation(c.l.baseID + idx)
				}
				if !c.l.sendTurn(idx, worker, conv) {
					break
				}
			}
		}
	})
}

// sendTurn sends the next turn of conv as request idx and records its row; false
// when the turn failed.
func (l *levelRun) sendTurn(idx int64, worker int32, conv *workload.Conversation) bool {
	prompt, maxTokens := conv.Next(l.baseID+idx, idx)
	row, res := l.exchange(idx, worker, 0, prompt, maxTokens)
	row.ConversationID = ptr(conv.ID())
	row.Turn = ptr(int32(conv.Turn()))
	l.add(row)
	if row.Error != nil {
		return false
	}
	pt, ot := -1, -1
	if row.PromptTokens != nil {
		pt = int(*row.PromptTokens)
	}
	if row.OutputTokens != nil {
		ot = int(*row.OutputTokens)
	}
	conv.Answer(res.Text(), prompt.TargetTokens, pt, maxTokens, ot)
	return true
}
