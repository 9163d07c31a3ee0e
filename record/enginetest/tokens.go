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

// wordID is a word's token id: its FNV-1a hash, so that the same word is the same
// token in every prompt.
func wordID(word string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(word); i++ {
		h ^= uint32(word[i])
		h *= 16777619
	}
	return h
}

// appendTokenIDs appends the ids of text's words (CountTokens' split).
func appendTokenIDs(ids []uint32, text string) []uint32 {
	start := -1
	for i, r := range text {
		if unicode.IsSpace(r) {
			if start >= 0 {
				ids = append(ids, wordID(text[start:i]))
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		ids = append(ids, wordID(text[start:]))
	}
	return ids
}
