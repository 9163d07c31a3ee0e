package enginetest

import (
	"unicode"
	"unicode/utf8"
)

// CountTokens is the engine's tokenizer: the number of whitespace-separated words in
// text (the same split as strings.Fields), without allocating.
func CountTokens(text string) int {
	n := 0
	inWord := false
	for i := 0; i < len(text); {
		c := text[i]
		var space bool
		if c < utf8.RuneSelf {
			space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
			i++
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if space {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	return n
}
