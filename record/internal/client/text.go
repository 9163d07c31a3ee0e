package client

import (
	"encoding/json"
	"strings"
)

// answerText appends the answer text a chunk carries (chat delta content or
// completions text) to b. Only conversations need it, to send the answer back in the
// next turn's history; other requests never decode the text.
func answerText(b *strings.Builder, data []byte) {
	var w struct {
		Choices []struct {
			Delta *struct {
				Content *string `json:"content"`
			} `json:"delta"`
			Text *string `json:"text"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &w) != nil {
		return
	}
	for _, c := range w.Choices {
		if c.Delta != nil && c.Delta.Content != nil {
			b.WriteString(*c.Delta.Content)
		}
		if c.Text != nil {
			b.WriteString(*c.Text)
		}
	}
}

// Text is the answer text the stream carried, when its prompt asked for it
// (Prompt.KeepText); "" otherwise.
func (r *Result) Text() string {
	if r.text == nil {
		return ""
	}
	return r.text.String()
}
